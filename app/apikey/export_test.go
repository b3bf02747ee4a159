package apikey

import "crypto/rand"

// SetKeyID makes s's next Create use id as its key id (the prefix's hex), the secret random.
func SetKeyID(s *Service, id []byte) {
	first := true
	s.random = func(b []byte) (int, error) {
		if first {
			first = false
			return copy(b, id), nil
		}
		return rand.Read(b)
	}
}
