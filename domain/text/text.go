// Package text decides which strings from outside tokenscope may be kept as text. Postgres text
// and jsonb hold no NUL character (U+0000) and refuse invalid UTF-8 ("invalid byte sequence for
// encoding UTF8"), so such a string reaching the database fails the request with a 500, and one
// reaching a workflow fails every retry. The driving adapters check every value they take in
// here, before anything else sees it: Check for one value (a query, path or header value),
// CheckJSON for a JSON document (a request body, an NDJSON line), which names the member that
// holds the NUL. It may import only the standard library and domain/fault.
package text

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Reason is what a refused value is told it must be.
const Reason = "must be valid UTF-8 text without NUL (\\u0000) characters"

// Storable reports whether s can be stored as Postgres text: valid UTF-8 without NUL.
func Storable(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }

// StorableBytes is Storable for bytes, without making a string of them.
func StorableBytes(b []byte) bool { return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b) }

// Check refuses s unless it is Storable; the error names param.
func Check(param, s string) error {
	if Storable(s) {
		return nil
	}
	return invalid(param, Shown(s), Reason)
}

// maxShown bounds the bytes of a refused value an error repeats.
const maxShown = 64

// Shown is s as an error repeats it: NUL written as the six characters \u0000, invalid UTF-8
// as U+FFFD, cut to about 64 bytes. The error body then stays text any client can handle.
func Shown(s string) string {
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", `\u0000`)
}

// Cut is s cut to at most 64 bytes on a rune boundary, with "…" when anything was cut: how an
// error repeats a long value it does not need to sanitise.
func Cut(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// invalid is fault.Invalid without %q, which would double the backslash of a shown \u0000.
func invalid(param, shown, reason string) *fault.Error {
	return &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: param, Value: shown,
		Message: `invalid value "` + shown + `" for parameter "` + param + `": ` + reason}
}

// nulEscape is the only way a NUL can appear in valid JSON: a raw NUL byte is a syntax error.
// Its hex digits are all digits, so no other spelling exists.
var nulEscape = []byte(`\u0000`)

// CheckJSON refuses a JSON document in which a string, value or member name, holds a NUL,
// naming it by its path: members joined with dots, array elements as [i]
// ("metadata.team", "tokenAddresses[1]", "tokenCreators[0].address"). A NUL in a member name
// names the object holding it ("metadata"; the name itself at the top level) and repeats the
// name as the value. Invalid UTF-8 and lone surrogate escapes need no check here:
// encoding/json, which every decoder of the service uses for strings, turns them into U+FFFD.
//
// The cost is one scan for the escape \u0000; only a document that has it is walked, and a
// document that is not JSON at all is left to its decoder to report (CheckJSON returns nil).
func CheckJSON(b []byte) error {
	if !bytes.Contains(b, nulEscape) {
		return nil
	}
	return walk(b)
}

// frame is one open object or array of the walk.
type frame struct {
	object  bool
	name    string // object: the member being read
	wantKey bool   // object: the next string is a member name
	index   int    // array: the element being read
}

func walk(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []frame
	next := func() { // a value ended: move the enclosing container on
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or a syntax error the document's own decoder reports
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				next()
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				if strings.IndexByte(v, 0) >= 0 {
					param := path(stack[:n-1])
					if param == "" {
						param = Shown(v)
					}
					return invalid(param, Shown(v), "member names "+Reason)
				}
				stack[n-1].name, stack[n-1].wantKey = v, false
				continue
			}
			if strings.IndexByte(v, 0) >= 0 {
				param := path(stack)
				if param == "" {
					param = "body" // the document is a bare string
				}
				return invalid(param, Shown(v), Reason)
			}
		}
		next()
	}
}

// path names the value being read in the innermost of stack.
func path(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.name)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}
