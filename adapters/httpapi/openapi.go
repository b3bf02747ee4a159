package httpapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
)

// The OpenAPI 3.1 document (GET /openapi.json) is built once, in Go, from two sources that
// cannot drift apart silently:
//   - the operation table apiOperations (openapi_ops.go), one entry per route of routes.go;
//     TestOpenAPICoversRoutes walks Fiber's registered routes and fails on a route missing from
//     the table or an entry no route serves;
//   - the response DTO types themselves: schemaOf reads their fields and JSON tags by
//     reflection, and the keyed objects of the token records (marketData, stats, socialMedias)
//     are their DTO types too, each key-list field a member per item (keyedSchema). Every record
//     lists all its keys as required and allows no others, so the end-to-end tests, which
//     validate every response against this document, fail when an encoder and its DTO differ.
//
// Enumerations come from the domain parsers' own allowed lists (allowedBy), so a value added
// to a parser appears here too.

// schema is one JSON Schema (2020-12, as OpenAPI 3.1 uses it) or any other document object.
type schema = map[string]any

// openAPIDoc is the encoded document, built on first use.
var openAPIDoc = sync.OnceValue(func() []byte {
	b, err := json.Marshal(buildOpenAPI())
	if err != nil {
		panic("openapi: " + err.Error())
	}
	return b
})

// openAPI serves the document (no authentication: it describes, it does not disclose).
func openAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(openAPIDoc())
}

// allowedBy returns the values a domain parser accepts, read from the error it gives for a
// value nothing matches (a NUL, which no parser accepts).
func allowedBy(parse func(string) error) []string {
	f, ok := fault.As(parse("\x00"))
	if !ok || len(f.Allowed) == 0 {
		panic("openapi: parser without allowed values")
	}
	return slices.Clone(f.Allowed)
}

func ref(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }

func str() schema { return schema{"type": "string"} }

func enumOf(vals []string) schema { return schema{"type": "string", "enum": vals} }

func integer() schema { return schema{"type": "integer"} }

func boolean() schema { return schema{"type": "boolean"} }

func arrayOf(items schema) schema { return schema{"type": "array", "items": items} }

func describe(s schema, desc string) schema {
	out := maps(s)
	out["description"] = desc
	return out
}

func maps(s schema) schema {
	out := make(schema, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	return out
}

// nullable lets s be null too: a type array with "null" (and null in an enum), or, for a
// reference, anyOf the reference and null.
func nullOr(s schema) schema {
	if _, isRef := s["$ref"]; isRef {
		return schema{"anyOf": []any{s, schema{"type": "null"}}}
	}
	out := maps(s)
	if t, ok := s["type"].(string); ok {
		out["type"] = []string{t, "null"}
	}
	if e, ok := s["enum"].([]string); ok {
		vals := make([]any, 0, len(e)+1)
		for _, v := range e {
			vals = append(vals, v)
		}
		out["enum"] = append(vals, nil)
	}
	return out
}

// object is a closed record: every listed key is present (required), no other key is.
func object(props schema) schema {
	req := make([]string, 0, len(props))
	for k := range props {
		req = append(req, k)
	}
	slices.Sort(req)
	return schema{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

// schemas collects the named component schemas while the document is built.
type schemas struct {
	named map[string]schema
	names map[reflect.Type]string
	enums map[reflect.Type][]string
	// fieldEnums gives the values of DTO string fields that hold a domain enumeration (by
	// struct type, then JSON name).
	fieldEnums map[reflect.Type]map[string][]string
}

// component registers s under name and returns a reference to it.
func (g *schemas) component(name string, s schema) schema {
	g.named[name] = s
	return ref(name)
}

var (
	decimalRType = reflect.TypeFor[decimal.Decimal]()
	rawJSONType  = reflect.TypeFor[json.RawMessage]()
	anyType      = reflect.TypeFor[any]()
	digitPattern = "^-?[0-9]+$"
)

// of is the schema of values of type t as encoding/json (or the DTO's generated appendJSON,
// which json_test.go holds to the same bytes) writes them.
func (g *schemas) of(t reflect.Type) schema {
	if name, ok := g.names[t]; ok {
		if _, done := g.named[name]; !done {
			g.named[name] = schema{} // a placeholder against recursion
			g.named[name] = g.inline(t)
		}
		return ref(name)
	}
	return g.inline(t)
}

func (g *schemas) inline(t reflect.Type) schema {
	if vals, ok := g.enums[t]; ok {
		return enumOf(vals)
	}
	switch t {
	case decimalRType:
		return ref("Decimal")
	case rawJSONType, anyType:
		return schema{}
	case reflect.TypeFor[nullString]():
		return nullOr(str())
	case reflect.TypeFor[nullInt]():
		return nullOr(integer())
	case reflect.TypeFor[utcTime]():
		return nullOr(schema{"type": "string", "format": "date-time"})
	case reflect.TypeFor[creatorList]():
		return arrayOf(g.of(reflect.TypeFor[creatorDTO]()))
	case reflect.TypeFor[liquidityList]():
		return arrayOf(g.of(reflect.TypeFor[liquidityDTO]()))
	case reflect.TypeFor[socialsDTO]():
		return g.component("SocialMedias", describe(g.keyedSchema(t), "Every social link key; null where the token has none."))
	case reflect.TypeFor[marketDataDTO]():
		return g.component("TokenMarketData", g.keyedSchema(t))
	case reflect.TypeFor[periodDTO]():
		return g.component("TokenPeriod", g.keyedSchema(t))
	case reflect.TypeFor[periodsDTO]():
		return g.component("TokenPeriods", describe(g.keyedSchema(t),
			"Trading statistics per window ("+strings.Join(windowNames(), ", ")+")."))
	case reflect.TypeFor[multiStatsDTO]():
		return g.component("MultiTokenStats", g.keyedSchema(t))
	case reflect.TypeFor[multiMarketDTO]():
		return g.component("MultiTokenMarketData", g.keyedSchema(t))
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullOr(g.of(t.Elem()))
	case reflect.Slice:
		return arrayOf(g.of(t.Elem()))
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": g.of(t.Elem())}
	case reflect.String:
		return str()
	case reflect.Bool:
		return boolean()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return integer()
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	case reflect.Struct:
		props, optional := schema{}, []string{}
		g.fields(t, props, &optional)
		s := object(props)
		if len(optional) > 0 {
			s["required"] = slices.DeleteFunc(s["required"].([]string), func(k string) bool { return slices.Contains(optional, k) })
		}
		return s
	}
	panic("openapi: no schema for " + t.String())
}

// fields adds the JSON members of struct t to props (embedded structs flattened); members
// with omitempty are added to optional.
func (g *schemas) fields(t reflect.Type, props schema, optional *[]string) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, optional)
			continue
		}
		if name == "" {
			name = f.Name
		}
		var s schema
		if slices.Contains(strings.Split(opts, ","), "string") {
			// The ,string option writes an integer as a string of digits.
			s = schema{"type": "string", "pattern": digitPattern}
			if f.Type.Kind() == reflect.Pointer {
				s = nullOr(s)
			}
		} else if vals, ok := g.fieldEnums[t][name]; ok {
			s = enumOf(vals)
		} else {
			s = g.of(f.Type)
		}
		apiOpts := strings.Split(f.Tag.Get("openapi"), ",")
		if slices.Contains(apiOpts, "int32") {
			// An int32 field the spec declares so, "minimum 0" with nonnegative.
			s = schema{"type": "integer", "format": "int32"}
			if slices.Contains(apiOpts, "nonnegative") {
				s["minimum"] = 0
			}
			if f.Type.Kind() == reflect.Pointer {
				s = nullOr(s)
			}
		}
		if slices.Contains(apiOpts, "nullable") {
			// A nil slice or map the encoder writes as null (the spec's "array … or null").
			s = nullOr(s)
		}
		props[name] = s
		if slices.Contains(strings.Split(opts, ","), "omitempty") {
			*optional = append(*optional, name)
		}
	}
}

// keyedSchema is the object schema of a keyed object's DTO (dto_token.go): a member per field,
// or per item of a byWindow, byGroup or bySocial field; counts written with ,string as strings
// of digits.
func (g *schemas) keyedSchema(t reflect.Type) schema {
	props := schema{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft, keys := f.Type, []string{""}
		if items, ok := keyListOf(ft); ok {
			ft, keys = ft.Elem(), items
		}
		s := g.of(ft)
		if opts == "string" {
			s = ref("DigitString")
		}
		for _, k := range keys {
			props[strings.Replace(name, "*", k, 1)] = s
		}
	}
	return object(props)
}

func windowNames() []string {
	out := make([]string, len(token.AllWindows))
	for i, w := range token.AllWindows {
		out[i] = string(w)
	}
	return out
}
