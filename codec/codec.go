// Package codec encrypts what cosci puts in Temporal: every payload (workflow and activity
// inputs and results, signals, updates, queries, memos, the Web UI's summaries and
// details) and every failure's message and stack trace. The worker, the starter and the
// codec server use it; the Web UI and the temporal CLI read encrypted sessions through the
// codec server (Handler).
//
// A payload is sealed whole (its metadata and data) with the keyring's current key, and
// its key id goes into the new payload's metadata, so that a key rotates while payloads
// sealed with the old one still decode. Search attributes are never encoded by Temporal:
// cosci puts no research text in them.
package codec

import (
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/keyring"
)

// The metadata of an encrypted payload.
const (
	Encoding      = "binary/encrypted"
	MetadataKeyID = "encryption-key-id"
)

// Codec seals payloads with a keyring. A Codec without keys encodes nothing and decodes
// only what is not encrypted: it explains, rather than fails obscurely, when it meets a
// payload it cannot open.
type Codec struct {
	Keys *keyring.Keyring
}

// Encode seals each payload.
func (c Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if c.Keys == nil {
		return payloads, nil
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		id, sealed := c.Keys.Seal(plain, nil)
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte(id)},
			Data:     sealed,
		}
	}
	return out, nil
}

// ErrNoKeys is an encrypted payload met by a process that has no keys.
var ErrNoKeys = errors.New("this session's texts are encrypted, and this process has no keys: set COSCI_KEYS_FILE to the lab's key file")

// Decode opens each encrypted payload; others pass as they are (a session that ran
// before encryption was turned on).
func (c Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		if c.Keys == nil {
			return nil, fmt.Errorf("payload sealed with key %s: %w", id, ErrNoKeys)
		}
		plain, err := c.Keys.Open(id, p.GetData(), nil)
		if err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(plain, &q); err != nil {
			return nil, fmt.Errorf("payload sealed with key %s does not hold a payload: %w", id, err)
		}
		out[i] = &q
	}
	return out, nil
}

// DataConverter is Temporal's default converter with the codec over it.
func DataConverter(keys *keyring.Keyring) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), Codec{Keys: keys})
}

// ClientOptions has a Temporal client (and the workers made from it) encode payloads with
// the codec, and failures with the message and stack trace in the encoded attributes, so
// that an error quoting a goal is as unreadable as the goal. Without keys it still decodes
// with the codec, to explain an encrypted payload it cannot open.
func ClientOptions(keys *keyring.Keyring) func(*client.Options) {
	return func(o *client.Options) {
		dc := DataConverter(keys)
		o.DataConverter = dc
		if keys != nil {
			o.FailureConverter = temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
				DataConverter: dc, EncodeCommonAttributes: true,
			})
		}
	}
}
