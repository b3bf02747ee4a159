// Package kyt is the pure model of KYT (know-your-transaction) compliance registration:
// the withdrawal-attempt and transfer requests of operations 10 and 11, their validation and
// canonical fingerprint, the deterministic externalId, the stored Registration with its
// pending → registered | failed life cycle, and the built-in provider's screening rule.
// It may import only the standard library, shopspring/decimal and other domain packages.
package kyt

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Network is the KYT network name. The public API spells the values with mixed case
// (Solana, bitcoin, ethereum) and its SDKs send them exactly so, so parsing is case-sensitive.
type Network string

const (
	Solana   Network = "Solana"
	Bitcoin  Network = "bitcoin"
	Ethereum Network = "ethereum"
)

// Networks lists the accepted networks in the spec's order.
var Networks = []Network{Solana, Bitcoin, Ethereum}

// ParseNetwork accepts exactly one of Networks; the error names the parameter "network".
func ParseNetwork(s string) (Network, error) {
	for _, n := range Networks {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fault.InvalidParam("network", s, networkNames()...)
}

func networkNames() []string {
	out := make([]string, len(Networks))
	for i, n := range Networks {
		out[i] = string(n)
	}
	return out
}

// Direction says whether a registered transfer left (sent) or reached (received) the account.
type Direction string

const (
	Sent     Direction = "sent"
	Received Direction = "received"
)

// ParseDirection accepts exactly sent or received; the error names the parameter "direction".
func ParseDirection(s string) (Direction, error) {
	switch Direction(s) {
	case Sent, Received:
		return Direction(s), nil
	}
	return "", fault.InvalidParam("direction", s, string(Sent), string(Received))
}

// Address and hash syntax, per network. Only the shape is checked (alphabet, length, decoded
// size); checksums (base58check, bech32, EIP-55) are not verified because the provider is the
// authority on whether an address exists, and EIP-55 needs Keccak, which the standard library
// lacks. The shapes:
//
//	Solana   address: base58 of exactly 32 bytes; hash: transaction signature, base58 of exactly 64 bytes.
//	ethereum address: "0x" + 40 hex digits;       hash: "0x" + 64 hex digits.
//	bitcoin  address: base58 of 25 bytes with a P2PKH/P2SH version byte (mainnet 0x00, 0x05;
//	         testnet 0x6f, 0xc4), or bech32 (hrp bc, tb or bcrt, one case, 14–90 characters);
//	         hash: txid, 64 hex digits without a prefix.
//
// Hex is accepted in either case; Normalize lowercases it.

// ValidAddress reports whether s has the shape of an address on network n.
func ValidAddress(n Network, s string) bool {
	switch n {
	case Solana:
		b, ok := base58Decode(s)
		return ok && len(b) == 32
	case Ethereum:
		return has0xHex(s, 40)
	case Bitcoin:
		if b, ok := base58Decode(s); ok && len(b) == 25 {
			switch b[0] {
			case 0x00, 0x05, 0x6f, 0xc4:
				return true
			}
			return false
		}
		return validBech32(s)
	}
	return false
}

// ValidHash reports whether s has the shape of a transaction hash on network n.
func ValidHash(n Network, s string) bool {
	switch n {
	case Solana:
		b, ok := base58Decode(s)
		return ok && len(b) == 64
	case Ethereum:
		return has0xHex(s, 64)
	case Bitcoin:
		return isHex(s, 64)
	}
	return false
}

// normalizeHexish lowercases the case-insensitive encodings (hex, bech32) and leaves base58,
// whose case is significant, alone.
func normalizeHexish(n Network, s string) string {
	switch n {
	case Ethereum:
		return strings.ToLower(s)
	case Bitcoin:
		if isHex(s, 64) || validBech32(s) {
			return strings.ToLower(s)
		}
	}
	return s
}

func has0xHex(s string, digits int) bool {
	if len(s) != digits+2 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	return isHex(s[2:], digits)
}

func isHex(s string, digits int) bool {
	if len(s) != digits {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Decode decodes the Bitcoin/Solana base58 alphabet. Inputs longer than 128 characters
// are refused so the quadratic loop stays cheap.
func base58Decode(s string) ([]byte, bool) {
	if s == "" || len(s) > 128 {
		return nil, false
	}
	var out []byte // big-endian magnitude, without the leading zero bytes
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base58Alphabet, s[i])
		if d < 0 {
			return nil, false
		}
		carry := d
		for j := len(out) - 1; j >= 0; j-- {
			carry += int(out[j]) * 58
			out[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			out = append([]byte{byte(carry)}, out...)
			carry >>= 8
		}
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), out...), true
}

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

func validBech32(s string) bool {
	if len(s) < 14 || len(s) > 90 {
		return false
	}
	lower := strings.ToLower(s)
	if s != lower && s != strings.ToUpper(s) {
		return false // mixed case is forbidden by BIP 173
	}
	sep := strings.LastIndexByte(lower, '1')
	if sep < 0 {
		return false
	}
	switch lower[:sep] {
	case "bc", "tb", "bcrt":
	default:
		return false
	}
	data := lower[sep+1:]
	if len(data) < 7 { // witness version + at least the 6-character checksum
		return false
	}
	for i := 0; i < len(data); i++ {
		if strings.IndexByte(bech32Charset, data[i]) < 0 {
			return false
		}
	}
	return true
}
