package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/leadline/leadline/apikit"
)

// metaUpload marks an operation whose body is a file (a CSV import): the
// guard copies it to a temporary file, up to the server's upload limit,
// instead of reading it into memory under maxBody, and the operation takes
// the file with takeUpload.
const metaUpload = "leadline.upload"

// DefaultMaxUpload is the largest file an upload operation takes when
// Config.MaxUploadBytes is not set: 100 MiB.
const DefaultMaxUpload = 100 << 20

// upload is a request body kept in a temporary file that is already
// unlinked: it goes away when the file is closed, whoever closes it.
type upload struct {
	mu      sync.Mutex
	file    *os.File
	claimed bool
	// fingerprint is the request's idempotency fingerprint, hashed as the
	// body was copied: the method, the path and query, and the bytes.
	fingerprint string
}

type uploadKey struct{}

// spool copies body to a temporary file, hashing it for the request's
// fingerprint. A body over limit bytes is refused with 422, in the
// envelope.
func spool(body io.Reader, method, requestURI string, limit int64) (*upload, error) {
	f, err := os.CreateTemp("", "leadline-upload-*")
	if err != nil {
		return nil, err
	}
	// Unlinked at once: nothing is left behind, whatever ends the process.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(method + " " + requestURI + "\n"))
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(body, limit+1))
	if err == nil && n > limit {
		err = uploadTooLarge(limit)
	} else if err != nil {
		err = apikit.Invalid("The request body could not be read.", "Send the whole file again.")
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &upload{file: f, fingerprint: hex.EncodeToString(h.Sum(nil))}, nil
}

// uploadTooLarge is the answer to a file over the upload limit: 422
// E_PAYLOAD_INVALID, the spec's status for invalid input, as every other
// body over its limit gets.
func uploadTooLarge(limit int64) *ErrorBody {
	size := fmt.Sprintf("%d bytes", limit)
	if limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", limit>>20)
	}
	b := fromAPI(apikit.Invalid("The file is larger than "+size+", the most one request takes.",
		"Split the file into parts of at most "+size+" and send each, or import it with `leadline import`, which reads a file of any size."))
	return b
}

// release closes the file unless the operation took it.
func (u *upload) release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.claimed {
		u.claimed = true
		u.file.Close()
	}
}

// withUpload is ctx carrying u for the operation.
func withUpload(ctx context.Context, u *upload) context.Context {
	return context.WithValue(ctx, uploadKey{}, u)
}

// takeUpload hands the operation the request's file, read from its start;
// the operation closes it. It is nil when the request carries none.
func takeUpload(ctx context.Context) io.ReadCloser {
	u, _ := ctx.Value(uploadKey{}).(*upload)
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.claimed {
		return nil
	}
	u.claimed = true
	return u.file
}
