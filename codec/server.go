package codec

import (
	"net/http"

	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/httpguard"
	"github.com/cosci-dev/cosci/internal/keyring"
)

// MaxBody bounds a request to /encode or /decode: Temporal keeps a payload under 2 MiB
// and a gRPC message under 4 MiB by default, so the payloads of one request, in JSON and
// base64, fit well within it.
const MaxBody = 16 << 20

// ServerOptions are what the codec server allows.
type ServerOptions struct {
	// Origins are the Web UI origins (scheme://host:port) whose pages may call the server
	// from a browser; CORS answers them, and a request from any other origin is refused.
	Origins []string
	// Token, if set, is the bearer token every /encode and /decode must carry
	// (Authorization: Bearer <token>): `temporal --codec-auth "Bearer <token>"`, or a UI
	// behind a proxy that adds it. Preflight requests carry none, as browsers send them.
	Token string
	// Hosts are the host names the Host header may name (none: the loopback names), so
	// that a page whose name is made to resolve to this machine (DNS rebinding) is refused.
	Hosts []string
}

// Handler serves /encode and /decode for the Web UI (its codec endpoint setting, or the
// dev server's --ui-codec-endpoint) and `temporal --codec-endpoint`, the endpoints of
// Temporal's remote codec, behind httpguard: the Host and Origin checks, CORS for the UI's
// origins, the bearer token and a bounded body.
func Handler(keys *keyring.Keyring, o ServerOptions) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(Codec{Keys: keys})
	return httpguard.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST /encode or /decode", http.StatusMethodNotAllowed)
			return
		}
		codec.ServeHTTP(w, r)
	}), httpguard.Options{
		Token:        o.Token,
		Realm:        "cosci codec",
		Hosts:        o.Hosts,
		Origins:      o.Origins,
		AllowMethods: []string{"POST", "OPTIONS"},
		AllowHeaders: []string{"Content-Type", "X-Namespace", "Authorization"},
		MaxBody:      MaxBody,
	})
}

// Server is the codec server's http.Server: Handler with httpguard's bounded headers and
// read, write and idle timeouts.
func Server(keys *keyring.Keyring, o ServerOptions) *http.Server {
	return httpguard.Server(Handler(keys, o))
}
