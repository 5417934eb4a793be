package tools

// A tool call, and what the model reads of its result.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is what a tool call gave back.
type Outcome struct {
	Content    string          // the text the model reads
	Structured json.RawMessage // the structured result, if any
	IsError    bool            // the tool reported an error (a result, not a failure)
}

// Call calls a tool ("server.tool") with arguments (a JSON object). A tool's own error
// (a bad argument, nothing found) is an Outcome with IsError, for the model to read; an
// error return is a failure to reach the tool (retried by the caller's policy), or an
// *UnknownError for a tool the server does not have.
func (b *Box) Call(ctx context.Context, name string, args json.RawMessage) (Outcome, error) {
	srv, tool, err := research.SplitTool(name)
	if err != nil || tool == "*" {
		return Outcome{}, &UnknownError{What: fmt.Sprintf("tool %q: name one tool, server.tool", name)}
	}
	s, err := b.find(srv)
	if err != nil {
		return Outcome{}, err
	}
	// The server's own timeout bounds each call, whatever the caller allows.
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	var arguments map[string]any
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &arguments); err != nil {
			return Outcome{Content: "the arguments are not a JSON object (" + err.Error() + "); call the tool again with a JSON object that matches its input schema", IsError: true}, nil
		}
	}
	s.mu.Lock()
	cs, err := b.connected(ctx, s)
	if err == nil && !slices.ContainsFunc(s.tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
		err = &UnknownError{What: fmt.Sprintf("tool %q on server %s", tool, srv)}
	}
	s.mu.Unlock()
	if err != nil {
		return Outcome{}, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	var refused *jsonrpc.Error
	switch {
	case err == nil:
		return outcome(res), nil
	case errors.As(err, &refused) && !errors.Is(err, mcp.ErrConnectionClosed):
		// The server answered, refusing the request (bad arguments, say): the model reads
		// why, as it would a tool's own error. Asking again the same way would not help.
		return Outcome{Content: fmt.Sprintf("the %s server refused the call: %s", srv, refused.Message), IsError: true}, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Outcome{}, fmt.Errorf("tool %s did not answer within %s: %w", name, s.cfg.CallTimeout(), err)
	case ctx.Err() == nil:
		// The connection is gone (a server that died, a network that failed): the next
		// call connects again.
		s.mu.Lock()
		s.drop(cs)
		s.mu.Unlock()
	}
	return Outcome{}, fmt.Errorf("tool %s: %w", name, err)
}

// outcome turns an MCP result into what the model reads: its text parts, and a note for
// each part that is not text.
func outcome(res *mcp.CallToolResult) Outcome {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a resource: %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[a resource: %s]", c.Resource.URI))
			}
		}
	}
	o := Outcome{Content: strings.Join(parts, "\n"), IsError: res.IsError}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			o.Structured = b
		}
	}
	if o.Content == "" && len(o.Structured) > 0 {
		o.Content = string(o.Structured)
	}
	return o
}
