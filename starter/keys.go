package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/keyring"
)

// labKeys are the keys of an encrypted deployment (COSCI_KEYS_FILE or COSCI_KEYS), nil
// for one that encrypts nothing. A key file that is named but unusable is an error before
// anything is sent. The file is read once for as long as the variables name the same keys:
// a list or a tree decodes a memo per session.
func labKeys() (*keyring.Keyring, error) {
	read.Lock()
	defer read.Unlock()
	file, inline := os.Getenv("COSCI_KEYS_FILE"), os.Getenv("COSCI_KEYS")
	if !read.done || read.file != file || read.inline != inline {
		read.keys, read.err = keyring.FromEnv(os.Getenv)
		read.file, read.inline, read.done = file, inline, true
	}
	return read.keys, read.err
}

// A key file accepted only because COSCI_KEYS_FILE_LAX is set is warned about where the
// starter's messages go.
func init() { keyring.Warn = func(msg string) { fmt.Fprintln(stderr, msg) } }

// read is what labKeys read last, and from which variables.
var read struct {
	sync.Mutex
	done         bool
	file, inline string
	keys         *keyring.Keyring
	err          error
}

// memoConverter decodes memos: encoded, and so encrypted, like every payload.
func memoConverter() converter.DataConverter {
	k, _ := labKeys() // a bad key file fails the command when it dials
	return codec.DataConverter(k)
}

const keygenArgs = "[--id ID]"

func cmdKeygen(_ context.Context, args []string) error {
	fs := newFlagSet("keygen", keygenArgs, "Print a new encryption key, a line for the top of the lab's key file (COSCI_KEYS_FILE): "+
		"the first key seals, and the ones after it still open what they sealed, so a key rotates by adding the new one first.")
	id := fs.String("id", time.Now().UTC().Format("2006-01-02"), "the key's id, kept beside everything it seals (letters, digits, '.', '_', '-')")
	if err := parseFlags(fs, args, ""); err != nil {
		return err
	}
	line, err := keyring.New(*id)
	if err != nil {
		return usageErrorf("--id: %v", err)
	}
	fmt.Fprintln(stdout, line)
	return nil
}

const codecServerArgs = "[--listen ADDR] [--origin URL]..."

// uiOrigins is a repeatable flag: the Web UI origins allowed to call the codec server.
type uiOrigins []string

func (o *uiOrigins) String() string     { return strings.Join(*o, ",") }
func (o *uiOrigins) Set(v string) error { *o = append(*o, strings.TrimRight(v, "/")); return nil }

func cmdCodecServer(ctx context.Context, args []string) error {
	fs := newFlagSet("codec-server", codecServerArgs, "Serve the codec endpoints (/encode, /decode) the Temporal Web UI and `temporal --codec-endpoint` "+
		"call to read encrypted sessions, with the keys of COSCI_KEYS_FILE (or COSCI_KEYS). With COSCI_CODEC_TOKEN set, every call must carry "+
		"Authorization: Bearer <token>.")
	listen := fs.String("listen", "127.0.0.1:8089", "address to serve on")
	var allowed uiOrigins
	fs.Var(&allowed, "origin", "a Web UI origin allowed to call from the browser (CORS), e.g. http://localhost:8233; repeat for several (default http://localhost:8233)")
	if err := parseFlags(fs, args, ""); err != nil {
		return err
	}
	keys, err := labKeys()
	if err != nil {
		return err
	}
	if keys == nil {
		return errors.New("no keys: set COSCI_KEYS_FILE to the lab's key file (make a key with: starter keygen)")
	}
	if len(allowed) == 0 {
		allowed = uiOrigins{"http://localhost:8233"}
	}
	token := os.Getenv("COSCI_CODEC_TOKEN")
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: codec.Handler(keys, codec.ServerOptions{Origins: allowed, Token: token}), ReadHeaderTimeout: 10 * time.Second}
	auth := "none (keep it on a trusted network, or set COSCI_CODEC_TOKEN)"
	if token != "" {
		auth = "bearer token"
	}
	fmt.Fprintf(stdout, "codec server on http://%s for %s; keys %s; auth: %s\n", l.Addr(), allowed.String(), strings.Join(keys.IDs(), ", "), auth)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
