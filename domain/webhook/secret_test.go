package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

func seq(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

func TestNewSecret(t *testing.T) {
	t.Run("32 bytes 0..31", func(t *testing.T) {
		s := webhook.NewSecret(seq(32, 0))
		// base64 of 00 01 … 1f, worked out with Python's base64 module
		assert.Equal(t, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", s.Reveal())
		assert.Equal(t, "whsec_[redacted]", s.String())
		back, err := webhook.ParseSecret(s.Reveal())
		require.NoError(t, err)
		assert.True(t, back.Equal(s))
	})
	for _, n := range []int{0, 23, 33} {
		t.Run("panics on wrong size", func(t *testing.T) {
			assert.Panics(t, func() { webhook.NewSecret(seq(n, 0)) })
		})
	}
	t.Run("caller's slice is copied", func(t *testing.T) {
		b := seq(24, 0)
		s := webhook.NewSecret(b)
		b[0] = 99
		assert.Equal(t, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", s.Reveal())
	})
}

func TestParseSecret(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true},                        // 24 bytes
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false},                             // no prefix
		{"whsec_abcd", false},                                                   // 3 bytes
		{"whsec_!!!!", false},                                                   // not base64
		{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)), false}, // too long
		{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 64)), true},  // upper bound
	} {
		t.Run(tc.in[:min(len(tc.in), 16)], func(t *testing.T) {
			_, err := webhook.ParseSecret(tc.in)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Equal(t, "secret", faultOf(t, err).Param)
				assert.NotContains(t, err.Error(), "LaLaSw", "the secret is not echoed in full")
			}
		})
	}
}

func TestSign(t *testing.T) {
	t.Run("Standard Webhooks reference vector", func(t *testing.T) {
		s, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
		require.NoError(t, err)
		got := webhook.Sign(s, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
		assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", got)
	})
	t.Run("independent HMAC over id.ts.body", func(t *testing.T) {
		key := seq(32, 0)
		body := []byte(`{"channel":"sol.token.created","timestamp":1700000000000,"data":{"a":"x"}}`)
		m := hmac.New(sha256.New, key)
		m.Write([]byte("msg_1.1700000000." + string(body)))
		want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
		got := webhook.Sign(webhook.NewSecret(key), "msg_1", time.Unix(1700000000, 999_000_000), body)
		assert.Equal(t, want, got)
		assert.Equal(t, "v1,dsV4hnNXSZgobRIDSpasLakLieHM8S0BsGzJY0IwEHw=", got) // Python hmac, same inputs
	})
}

func TestSignatureHeaderAndVerify(t *testing.T) {
	oldS := webhook.NewSecret(seq(24, 1))
	newS := webhook.NewSecret(seq(24, 100))
	ts := time.Unix(1700000000, 0)
	body := []byte(`{"k":1}`)
	header := webhook.SignatureHeader([]webhook.Secret{newS, {}, oldS}, "msg_1", ts, body)
	parts := strings.Split(header, " ")
	require.Len(t, parts, 2, "zero secrets are skipped")
	assert.Equal(t, webhook.Sign(newS, "msg_1", ts, body), parts[0])
	assert.Equal(t, webhook.Sign(oldS, "msg_1", ts, body), parts[1])

	valid := webhook.Sign(oldS, "msg_1", ts, body)
	four := "v1,AAAA v1a,xyz " + valid + " v1,bm90IGl0"
	for _, tc := range []struct {
		name   string
		header string
		secret webhook.Secret
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"rotation header, new secret", header, newS, body, ts, true},
		{"rotation header, old secret", header, oldS, body, ts, true},
		{"third of four entries matches", four, oldS, body, ts, true},
		{"300 s old is inside tolerance", valid, oldS, body, ts.Add(300 * time.Second), true},
		{"301 s old", valid, oldS, body, ts.Add(301 * time.Second), false},
		{"301 s in the future", valid, oldS, body, ts.Add(-301 * time.Second), false},
		{"one body byte changed", valid, oldS, []byte(`{"k":2}`), ts, false},
		{"missing header", "", oldS, body, ts, false},
		{"other secret", valid, newS, body, ts, false},
		{"no secret", valid, webhook.Secret{}, body, ts, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify(tc.header, tc.secret, "msg_1", ts, tc.body, tc.now, webhook.DefaultTolerance)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	s := webhook.NewSecret(seq(24, 0))
	ts := time.Unix(1614265330, 0)
	h := webhook.Headers([]webhook.Secret{s}, "msg_x", ts, []byte("{}"))
	sig := webhook.Sign(s, "msg_x", ts, []byte("{}"))
	assert.Equal(t, map[string]string{
		"Content-Type":      "application/json",
		"webhook-id":        "msg_x",
		"webhook-timestamp": "1614265330",
		"webhook-signature": sig,
		"svix-id":           "msg_x",
		"svix-timestamp":    "1614265330",
		"svix-signature":    sig,
	}, h)
}

func TestRotation(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := webhook.NewSecret(seq(24, 0))
	second := webhook.NewSecret(seq(24, 50))
	e := mustEndpoint(t, webhook.WithSecret(first))
	require.Len(t, e.SigningSecrets(t0), 1)

	e.RotateSecret(second, t0, webhook.RotationOverlap)
	assert.True(t, e.Secret().Equal(second))
	assert.True(t, e.UpdatedAt().Equal(t0))
	for _, tc := range []struct {
		name string
		at   time.Time
		want []webhook.Secret
	}{
		{"right after", t0, []webhook.Secret{second, first}},
		{"23h59m later", t0.Add(24*time.Hour - time.Minute), []webhook.Secret{second, first}},
		{"24h later the old one is gone", t0.Add(24 * time.Hour), []webhook.Secret{second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.SigningSecrets(tc.at)
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.True(t, got[i].Equal(tc.want[i]), "secret %d", i)
			}
		})
	}
}
