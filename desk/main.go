// Command desk is the scientist's web page for cosci: their sessions, a form to start one,
// each session live (its ranking, hypotheses, reviews and citations, the tool calls that
// wait, the commands, the report), and who may read or steer it. Pages are rendered on the
// server and read without JavaScript; a small script of the desk's own follows the live
// line. People sign in with the lab's identity provider (OIDC), through its authenticating
// proxy, or, on a laptop, as the one local user. See docs/desk.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/connection"
	"github.com/cosci-dev/cosci/internal/converse"
	"github.com/cosci-dev/cosci/internal/httpguard"
	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "desk:", err)
			os.Exit(1)
		}
	}
}

// options are the desk's flags.
type options struct {
	listen, mode, publicURL, store     string
	issuer, clientID, scopes, groups   string
	policy, adminGroup, scientistGroup string
	localUser                          string
	proxies, allowedHosts              list
	wideProxies                        bool
	questions, starts, running         int
	maxUploadMB                        int
	library                            string
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// flags are the desk's flags, set into o.
func flags(o *options, getenv func(string) string) *flag.FlagSet {
	fs := flag.NewFlagSet("desk", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8090", "address to serve on")
	fs.StringVar(&o.mode, "auth", auth.ModeLocal, "how people sign in: oidc (the lab's identity provider), proxy (an authenticating proxy's headers) or local (one user, loopback only)")
	fs.StringVar(&o.publicURL, "public-url", "", "the desk's address as browsers reach it, e.g. https://desk.lab.example; https makes cookies Secure; the OIDC redirect is its /auth/callback (default http://<listen>)")
	fs.StringVar(&o.store, "store", "", "the workers' session store: a directory or a postgres:// URL (env COSCI_STORE, default .data/sessions)")
	fs.StringVar(&o.issuer, "oidc-issuer", "", "the identity provider's issuer URL (auth oidc); the client secret is COSCI_DESK_CLIENT_SECRET_FILE or COSCI_DESK_CLIENT_SECRET")
	fs.StringVar(&o.clientID, "oidc-client-id", "", "the desk's client id at the identity provider (auth oidc)")
	fs.StringVar(&o.scopes, "oidc-scopes", "openid,profile,email", "comma-separated scopes to ask for; add the one that brings the groups claim if the provider needs it")
	fs.StringVar(&o.groups, "groups-claim", "groups", "the ID token's claim that lists a person's groups (auth oidc)")
	fs.StringVar(&o.policy, "policy", "", "a YAML file that gives roles to identities and groups (see docs/desk.md)")
	fs.StringVar(&o.adminGroup, "admin-group", "", "a group whose members are admins (besides --policy)")
	fs.StringVar(&o.scientistGroup, "scientist-group", "", "a group whose members are scientists (besides --policy)")
	fs.Var(&o.proxies, "trusted-proxy", "an address or CIDR prefix of the authenticating proxy, whose headers are believed (auth proxy); repeat for several")
	fs.StringVar(&o.library, "library", "", "the lab's library folder, as the literature server reads it: the PDFs sessions cite are served from it at their page to those who may read the session (default: quotes link to their DOIs)")
	fs.BoolVar(&o.wideProxies, "trusted-proxy-wide", false, "accept a --trusted-proxy prefix wider than /24 (IPv4) or /64 (IPv6): every address in it may claim to be anyone")
	fs.Var(&o.allowedHosts, "allowed-host", "another host name browsers reach the desk by (its Host header), besides --public-url's and the listen address'; repeat for several")
	fs.IntVar(&o.questions, "questions-per-minute", defaultQuestions, "how many questions one person may ask the sessions a minute (each is a model turn); 0 for no limit")
	fs.IntVar(&o.starts, "sessions-per-hour", defaultStarts, "how many sessions one person may start an hour (each is many model turns); 0 for no limit")
	fs.IntVar(&o.running, "running-sessions", defaultRunning, "how many sessions of one person may run at once (not ended: active, suspended); 0 for no limit")
	fs.IntVar(&o.maxUploadMB, "max-upload-mb", defaultMaxUploadMB, "the largest table one may upload to a session, in MB (only those who may steer it may); a larger file is refused before anything is stored")
	fs.StringVar(&o.localUser, "local-user", session.LocalName(getenv), "the one user's identity (auth local; default $USER, or the account the desk runs as)")
	return fs
}

func parseOptions(args []string, getenv func(string) string) (options, error) {
	var o options
	fs := flags(&o, getenv)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("desk takes no arguments (got %q)", fs.Arg(0))
	}
	if o.maxUploadMB < 1 || o.maxUploadMB > 4096 {
		return o, fmt.Errorf("--max-upload-mb %d: from 1 to 4096", o.maxUploadMB)
	}
	if o.store == "" {
		o.store = getenv("COSCI_STORE")
	}
	if o.store == "" {
		o.store = ".data/sessions"
	}
	return o, nil
}

// loopbackAddr says whether a listen address is loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// authenticator builds the sign-in from the options and the environment; revocations
// keeps its sign-outs (the session store).
func authenticator(ctx context.Context, o options, getenv func(string) string, revocations auth.Revocations) (*auth.Authenticator, error) {
	key, found, err := auth.KeyFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if !found {
		if o.mode != auth.ModeLocal {
			return nil, errors.New("the desk needs its key to seal sign-ins and sign forms: set COSCI_DESK_KEY_FILE to a file holding 32 random bytes in hex (openssl rand -hex 32)")
		}
		key = auth.RandomKey()
	}
	pol, err := newPolicy(o.policy, o.adminGroup, o.scientistGroup, slog.Default())
	if err != nil {
		return nil, err
	}
	pu, err := publicURL(o)
	if err != nil {
		return nil, err
	}
	c := auth.Config{Mode: o.mode, Key: key, Roles: pol.Roles, Secure: pu.Scheme == "https", LocalUser: o.localUser, LocalAddr: o.listen, Revocations: revocations}
	switch o.mode {
	case auth.ModeLocal:
		if !loopbackAddr(o.listen) {
			return nil, fmt.Errorf("--auth local serves one user on this machine only: --listen %s is not a loopback address (use 127.0.0.1:PORT, or sign in with --auth oidc or proxy)", o.listen)
		}
		if err := privateFile(getenv("COSCI_DESK_TOKEN_FILE"), "COSCI_DESK_TOKEN_FILE"); err != nil {
			return nil, err
		}
		if c.LocalToken, err = httpguard.Token(getenv, "COSCI_DESK_TOKEN"); err != nil {
			return nil, err
		}
	case auth.ModeProxy:
		for _, p := range o.proxies {
			pre, err := netip.ParsePrefix(p)
			if err != nil {
				a, aerr := netip.ParseAddr(p)
				if aerr != nil {
					return nil, fmt.Errorf("--trusted-proxy %q is not an address or a CIDR prefix", p)
				}
				pre = netip.PrefixFrom(a, a.BitLen())
			}
			if wide := map[bool]int{true: 24, false: 64}[pre.Addr().Unmap().Is4()]; pre.Bits() < wide && !o.wideProxies {
				return nil, fmt.Errorf("--trusted-proxy %s is wider than /%d: every address in it could claim to be anyone; name the proxy's own addresses, or add --trusted-proxy-wide if the whole range is the proxy's", p, wide)
			}
			c.Proxies = append(c.Proxies, pre.Masked())
		}
	case auth.ModeOIDC:
		secret, err := clientSecret(getenv)
		if err != nil {
			return nil, err
		}
		if o.issuer == "" || o.clientID == "" {
			return nil, errors.New("--auth oidc needs --oidc-issuer and --oidc-client-id")
		}
		if c.OIDC, err = auth.NewOIDC(ctx, auth.OIDCConfig{Issuer: o.issuer, ClientID: o.clientID, ClientSecret: secret,
			RedirectURL: pu.JoinPath("/auth/callback").String(), Scopes: strings.Split(o.scopes, ","), GroupsClaim: o.groups}); err != nil {
			return nil, err
		}
	}
	return auth.New(c)
}

// publicURL is the desk's address as browsers reach it: --public-url, else the listen
// address over http.
func publicURL(o options) (*url.URL, error) {
	public := o.publicURL
	if public == "" {
		public = "http://" + o.listen
	}
	pu, err := url.Parse(public)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, fmt.Errorf("--public-url %q is not an http(s) URL", o.publicURL)
	}
	return pu, nil
}

func run(ctx context.Context, args []string, getenv func(string) string) error {
	o, err := parseOptions(args, getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	keys, err := keyring.FromEnv(getenv)
	if err != nil {
		return err
	}
	migrate, err := store.MigratingFromEnv(getenv)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, o.store)
	if err != nil {
		return err
	}
	defer st.Close()
	st.Encrypt(keys)
	st.Migrating(migrate)
	a, err := authenticator(ctx, o, getenv, st)
	if err != nil {
		return err
	}
	c, err := connection.Dial(log, codec.ClientOptions(keys))
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := newDesk(a, &temporalBackend{c: c, st: st, memos: codec.DataConverter(keys)}, st, log)
	if err != nil {
		return err
	}
	d.sealed = keys != nil
	if d.library, err = openLibrary(o.library); err != nil {
		return err
	}
	d.conv = temporalConversation{talk: converse.Client{C: c}, st: st}
	d.questions.limit, d.starts.limit, d.running = o.questions, o.starts, o.running
	d.maxUpload = int64(o.maxUploadMB) << 20
	pu, _ := publicURL(o) // checked by authenticator
	// The desk's own sign-in is its door, so httpguard's token rule is not its: it works
	// out the names the desk answers to, the only ones a browser may name as Host.
	l, hosts, err := httpguard.Listen(o.listen, true, append([]string{pu.Host}, o.allowedHosts...), "")
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	d.hosts, d.origins = hosts, []string{pu.Scheme + "://" + pu.Host}
	srv := httpguard.Server(d.handler())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("desk: serving", "url", "http://"+l.Addr().String(), "auth", o.mode, "store", st.Location(), "hosts", strings.Join(hosts, ","))
	fmt.Fprintf(os.Stdout, "desk on http://%s (sign-in: %s)\n", l.Addr(), o.mode)
	if o.mode == auth.ModeLocal {
		base := "http://" + l.Addr().String()
		if o.publicURL != "" {
			base = strings.TrimRight(o.publicURL, "/")
		}
		fmt.Fprintf(os.Stdout, "sign in on this machine: %s\n", a.SignInLink(base))
	}
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// privateFile refuses a file of secrets ("" for none) that other users of the machine may
// read or change, as ssh refuses such a private key, and says how to fix it.
func privateFile(file, variable string) error {
	if file == "" || runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("%s: %w", variable, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s is open to other users of this machine (mode %04o), and whoever reads it signs in as you: run `chmod 600 %s`", variable, file, perm, file)
	}
	return nil
}

// clientSecret is the desk's client secret at the identity provider, from
// COSCI_DESK_CLIENT_SECRET_FILE or COSCI_DESK_CLIENT_SECRET; "" for a public client.
func clientSecret(getenv func(string) string) (string, error) {
	if file := getenv("COSCI_DESK_CLIENT_SECRET_FILE"); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("COSCI_DESK_CLIENT_SECRET_FILE: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(getenv("COSCI_DESK_CLIENT_SECRET")), nil
}
