package codec

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/keyring"
)

// ServerOptions are what the codec server allows.
type ServerOptions struct {
	// Origins are the Web UI origins (scheme://host:port) whose pages may call the server
	// from a browser; CORS answers them and no other.
	Origins []string
	// Token, if set, is the bearer token every /encode and /decode must carry
	// (Authorization: Bearer <token>): `temporal --codec-auth "Bearer <token>"`, or a UI
	// behind a proxy that adds it. Preflight requests carry none, as browsers send them.
	Token string
}

// Handler serves /encode and /decode for the Web UI (its codec endpoint setting, or the
// dev server's --ui-codec-endpoint) and `temporal --codec-endpoint`, the endpoints of
// Temporal's remote codec, with CORS for the UI's origins and the bearer-token check.
func Handler(keys *keyring.Keyring, o ServerOptions) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(Codec{Keys: keys})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(o.Origins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST /encode or /decode", http.StatusMethodNotAllowed)
			return
		}
		if o.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(o.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="cosci codec"`)
				http.Error(w, "a bearer token is required", http.StatusUnauthorized)
				return
			}
		}
		codec.ServeHTTP(w, r)
	})
}
