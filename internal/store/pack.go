package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"

	"github.com/klauspost/compress/zstd"
)

// Compressed records. The records a session writes most of and nobody reads by eye, its
// turns (their prompts split into pieces, see pieces.go) and its checkpoints, are kept as
// Zstandard frames of their JSON; the pieces of prompts too, where that makes them
// smaller. Every other record stays plain JSON or text, readable with any tool.
//
// A record says which it is by its first bytes: a Zstandard frame starts with the format's
// magic number, which no JSON or text record can start with (0xB5 is no first byte of a
// UTF-8 character). So records written before the store compressed anything read as they
// always did, and `zstd -dc` reads a compressed one by hand.

// zstdMagic starts every Zstandard frame.
const zstdMagic = "\x28\xb5\x2f\xfd"

// maxPlain bounds what one record may decompress to: far above any record a session
// writes (a whole checkpoint of 5,000 hypotheses is a few MB), so that a damaged frame
// claiming terabytes is refused instead of allocated.
const maxPlain = 1 << 30

var (
	// The frames carry a checksum of their content, so a garbled record is refused, not
	// read back as other text. Level SpeedDefault (zstd's level 3) keeps a session's turn
	// records as small as the next level (7) does, and its checkpoints 8% larger, in two
	// thirds of the time (BENCHMARKS.md). Four records compress at once at most, which
	// bounds the encoders' memory; each takes microseconds.
	encoder = must(zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(4)))
	decoder = must(zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxPlain), zstd.WithDecoderConcurrency(4)))
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// compressed says whether a record is a Zstandard frame.
func compressed(b []byte) bool { return bytes.HasPrefix(b, []byte(zstdMagic)) }

// pack compresses a record.
func pack(plain []byte) []byte { return encoder.EncodeAll(plain, make([]byte, 0, len(plain)/3+64)) }

// unpack returns a record's plain bytes: a compressed one decompressed, any other as it is.
func unpack(b []byte) ([]byte, error) {
	if !compressed(b) {
		return b, nil
	}
	plain, err := decoder.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("not a sound compressed record: %w", err)
	}
	return plain, nil
}

// Plain returns a record's bytes as a tool reads them: a compressed record (a turn, a
// checkpoint, a piece of a prompt) decompressed to its JSON or text, any other record as it
// is. It is for tools and tests that read a store's files or rows directly; a turn's prompt
// is then in pieces, each a record of its own.
func Plain(record []byte) ([]byte, error) {
	b, err := unpack(record)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return b, nil
}

// encodeCompact encodes v as compact JSON and compresses it: for the records nobody reads
// by eye.
func encodeCompact(key string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s: %w", path.Base(key), err)
	}
	return pack(b), nil
}
