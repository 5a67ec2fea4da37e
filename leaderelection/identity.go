package leaderelection

import (
	"crypto/rand"
	"encoding/hex"
	"os"
)

// newIdentity returns the hostname, an underscore and 16 random hex
// digits. The hostname tells a person which machine leads; the random
// part keeps two candidates apart even on one host (two processes, a
// restarted Pod whose predecessor's term has not expired yet).
func newIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return host + "_" + hex.EncodeToString(b[:]), nil
}
