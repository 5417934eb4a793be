package providertest

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Token counts. The fake counts with o200k_base, the BPE encoding of OpenAI's current
// models (GPT-4o, GPT-4.1, GPT-5, o-series), through github.com/tiktoken-go/tokenizer, a
// pure-Go port of tiktoken with the encodings embedded: the same token ids tiktoken gives,
// no download, no cgo. For Claude it is a stand-in: Anthropic's tokenizer is not public
// (see doc.go for how far apart they are).

// o200k is the encoding, built once.
var o200k = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		panic("providertest: o200k_base is compiled into tiktoken-go/tokenizer and cannot be missing: " + err.Error())
	}
	return c
})

// Tokens is how many o200k_base tokens text has: what the fake counts for a text on either
// API. A benchmark can use it to size answers the way the fake will count them.
func Tokens(text string) int { return len(encode(text)) }

// Framing tokens. OpenAI's chat format wraps each message in special tokens
// (<|start|>role<|message|>content<|end|>, 3 tokens besides the role's own) and primes the
// reply with <|start|>assistant<|message|>; the fake puts ids for them past the end of the
// vocabulary, so they count and take part in the prefix but never equal a text token.
const (
	idStart uint32 = 1<<24 + iota
	idMessage
	idEnd
)

// encoded remembers texts already tokenized: a session re-sends the same long prefix in
// every call, and BPE costs about a microsecond per token. It is bounded by the bytes of
// text it holds, and simply emptied when full.
var encoded = struct {
	sync.Mutex
	ids   map[string][]uint32
	bytes int
}{ids: map[string][]uint32{}}

const encodedCap = 64 << 20 // bytes of text remembered

// encode returns text's token ids. It never fails: o200k_base tokenizes any string (invalid
// UTF-8 is tokenized byte by byte, as tiktoken does).
func encode(text string) []uint32 {
	if text == "" {
		return nil
	}
	encoded.Lock()
	ids, ok := encoded.ids[text]
	encoded.Unlock()
	if ok {
		return ids
	}
	raw, _, err := o200k().Encode(text)
	if err != nil {
		// Only the strict UTF-8 mode, which is never set, returns an error; a rough count
		// keeps the request going rather than failing a test for a fake's reason.
		raw = make([]uint, len(text)/4+1)
	}
	ids = make([]uint32, len(raw))
	for i, id := range raw {
		ids[i] = uint32(id)
	}
	encoded.Lock()
	if encoded.bytes+len(text) > encodedCap {
		clear(encoded.ids)
		encoded.bytes = 0
	}
	encoded.ids[text] = ids
	encoded.bytes += len(text)
	encoded.Unlock()
	return ids
}
