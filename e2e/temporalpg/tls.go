package temporalpg

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLS is the PEM files of a frontend that serves mutual TLS: the server's certificate and
// key, the CA that signed it and the clients' certificates, and one client certificate
// (for the server's system worker and this package's clients).
type TLS struct {
	CAFile, CertFile, KeyFile     string
	ClientCertFile, ClientKeyFile string
	// ServerName is the name the server's certificate is for (clients check it).
	ServerName string
}

// WriteTestPKI makes a CA, a server certificate for localhost and 127.0.0.1, and a client
// certificate, all signed by the CA and valid for a day, as PEM files in dir.
func WriteTestPKI(dir string) (*TLS, error) {
	t := &TLS{
		CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem"),
		ClientCertFile: filepath.Join(dir, "client.pem"), ClientKeyFile: filepath.Join(dir, "client-key.pem"),
		ServerName: "localhost",
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cosci test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(t.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	for _, leaf := range []struct {
		cert, key string
		serial    int64
		usage     x509.ExtKeyUsage
		dns       []string
		ips       []net.IP
	}{
		{t.CertFile, t.KeyFile, 2, x509.ExtKeyUsageServerAuth, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}},
		{t.ClientCertFile, t.ClientKeyFile, 3, x509.ExtKeyUsageClientAuth, nil, nil},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(leaf.serial), Subject: pkix.Name{CommonName: fmt.Sprintf("cosci test %d", leaf.serial)},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{leaf.usage},
			DNSNames: leaf.dns, IPAddresses: leaf.ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writePEM(leaf.cert, "CERTIFICATE", der); err != nil {
			return nil, err
		}
		if err := writePEM(leaf.key, "EC PRIVATE KEY", keyDER); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// clientConfig is how a client of the frontend dials it: the client certificate, and the
// CA for the server's.
func (t *TLS) clientConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.ClientCertFile, t.ClientKeyFile)
	if err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}
	ca, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("temporalpg: no certificate in %s", t.CAFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: t.ServerName}, nil
}
