package webhook

// Field is one optional, nullable member of a partial update: absent (the zero value, leave it
// as it is), null (Set and Null: clear it) or a value (Set: replace it). The HTTP adapter maps
// a PATCH body's absent members, JSON nulls and values onto it.
type Field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Value is a present field holding v.
func Value[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// Null is a field explicitly cleared (sent as JSON null).
func Null[T any]() Field[T] { return Field[T]{Set: true, Null: true} }

// Absent reports whether the field was not sent.
func (f Field[T]) Absent() bool { return !f.Set }

// Get returns the value and whether there is one (false for absent and null).
func (f Field[T]) Get() (T, bool) { return f.Value, f.Set && !f.Null }

// Patch is a partial update of an endpoint (operation 13; a create sets the same fields).
// RateLimit is wider than int32 so that an out-of-range number reaches Apply and is reported as
// such. Apply checks every value and names the API's member in its errors.
type Patch struct {
	URL         Field[string]
	Channels    Field[[]Channel]
	Description Field[string]
	Disabled    Field[bool]
	Filter      Field[string]
	FilterTypes Field[[]string]
	Metadata    Field[map[string]string]
	RateLimit   Field[int64]
}

// IsEmpty reports whether the patch changes nothing.
func (p Patch) IsEmpty() bool {
	return !p.URL.Set && !p.Channels.Set && !p.Description.Set && !p.Disabled.Set && !p.Filter.Set &&
		!p.FilterTypes.Set && !p.Metadata.Set && !p.RateLimit.Set
}
