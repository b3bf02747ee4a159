package kyt

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
)

// Namespace is the RFC 4122 namespace under which tokenscope derives externalIds. It is a
// fixed random UUID: changing it would change every externalId ever handed out.
var Namespace = [16]byte{0x3c, 0x0e, 0x9a, 0x57, 0x6d, 0x21, 0x4f, 0x8b, 0xa4, 0x1d, 0x52, 0xe7, 0x90, 0x3b, 0xc6, 0x18}

// ExternalID derives the registration's externalId from the account and a registration key
// (the kind and the client's Idempotency-Key or, without one, the request's fingerprint), so a
// retried or concurrent registration with the same key gets the same id (the provider's
// observed ids are name-based UUIDs too). The name is the length-prefixed account id followed
// by the key, so ("ab","c") and ("a","bc") differ.
func ExternalID(accountID, key string) string {
	return NameUUID(Namespace, strconv.Itoa(len(accountID))+":"+accountID+key)
}

// NameUUID is an RFC 4122 §4.3 name-based UUID, version 5 (SHA-1): the first 16 bytes of
// SHA-1(namespace || name) with the version and variant bits set, in canonical 8-4-4-4-12 form.
func NameUUID(namespace [16]byte, name string) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// ParseExternalID reads an externalId as a client echoes it: an RFC 4122 UUID in canonical
// 8-4-4-4-12 form, hex digits in either case. It returns the lowercase form tokenscope hands
// out; ok is false for anything else, which therefore names no registration.
func ParseExternalID(s string) (id string, ok bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return "", false
			}
		}
	}
	return string(b), true
}
