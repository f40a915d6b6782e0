package envconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

func TestTLSLoadFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir)

	cfg, err := TLS{}.Load(false)
	require.NoError(t, err)
	require.Nil(t, cfg, "no settings: a plain connection")

	cfg, err = TLS{}.Load(true)
	require.NoError(t, err)
	require.NotNil(t, cfg, "an API key implies TLS with the system roots")
	require.Nil(t, cfg.RootCAs)

	cfg, err = TLS{CertFile: cert, KeyFile: key, CAFile: cert, ServerName: "temporal.internal"}.Load(false)
	require.NoError(t, err)
	require.Len(t, cfg.Certificates, 1)
	require.NotNil(t, cfg.RootCAs)
	require.Equal(t, "temporal.internal", cfg.ServerName)

	_, err = TLS{CertFile: cert}.Load(false)
	require.ErrorContains(t, err, "go together")
	_, err = TLS{CertFile: key, KeyFile: cert}.Load(false)
	require.ErrorContains(t, err, "client certificate")
	bad := filepath.Join(dir, "bad.pem")
	require.NoError(t, os.WriteFile(bad, []byte("not a certificate"), 0o600))
	_, err = TLS{CAFile: bad}.Load(false)
	require.ErrorContains(t, err, "holds no PEM certificate")
}
