package testpeer

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientOptions configure a scripted client. The zero value is the library's
// default protocol negotiation with a client name distinct per library.
type ClientOptions struct {
	// ProtocolVersion is the version the client asks for. "" is the
	// library's default: 2026-07-28 first, probing with server/discover and
	// falling back to initialize. "2025-11-25" (or earlier) pins the
	// stateful era: initialize only.
	ProtocolVersion string
	// Name and Version are the clientInfo. "" means "testpeer-gosdk-client"
	// or "testpeer-mcpgo-client", and "1.0.0".
	Name, Version string
}

func (o ClientOptions) impl(defaultName string) (name, version string) {
	name, version = o.Name, o.Version
	if name == "" {
		name = defaultName
	}
	if version == "" {
		version = "1.0.0"
	}
	return name, version
}

// RunGoSDK connects a go-sdk client over r (server to client) and w (client
// to server), runs the script, closes the session and returns what the client
// saw. A protocol error is a Step; any other failure ends the script and is
// returned with the steps done so far.
func RunGoSDK(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts ClientOptions) (Transcript, error) {
	name, version := opts.impl("testpeer-gosdk-client")
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w},
		&mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion})
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("go-sdk client: connect: %w", err)
	}
	defer cs.Close()
	return goSDKScript(ctx, cs)
}

func summarizeGoSDK(res *mcp.CallToolResult) string {
	var b resultBuilder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.text(c.Text)
		case *mcp.ImageContent:
			b.media("image", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			b.media("audio", c.MIMEType, len(c.Data))
		case *mcp.EmbeddedResource:
			if rc := c.Resource; rc == nil {
				b.other("resource without contents")
			} else if rc.Blob != nil {
				b.resourceBlob(rc.URI, rc.MIMEType, len(rc.Blob))
			} else {
				b.resourceText(rc.URI, rc.MIMEType, rc.Text)
			}
		case *mcp.ResourceLink:
			b.link(c.URI)
		default:
			b.other(fmt.Sprintf("%T", c))
		}
	}
	b.isError(res.IsError)
	b.structured(res.StructuredContent)
	return b.String()
}

// RunMCPGo is [RunGoSDK] with an mcp-go client.
func RunMCPGo(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts ClientOptions) (Transcript, error) {
	// The mcp-go transport closes w but not r: close r when done so that
	// its reading goroutine ends.
	defer r.Close()
	r = quietReader{r}
	var copts []mcpgoclient.ClientOption
	if opts.ProtocolVersion != "" {
		copts = append(copts, mcpgoclient.WithProtocolVersion(opts.ProtocolVersion))
	}
	c := mcpgoclient.NewClient(mcpgotransport.NewIO(r, w, nil), copts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("mcp-go client: start: %w", err)
	}
	name, version := opts.impl("testpeer-mcpgo-client")
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = opts.ProtocolVersion
	init.Params.ClientInfo = mcpgo.Implementation{Name: name, Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("mcp-go client: initialize: %w", err)
	}

	tr, err := mcpgoScript(ctx, c)
	if err != nil {
		return tr, err
	}
	return tr, c.Close()
}

// mcpgoSentinels maps the errors that the mcp-go client returns for JSON-RPC
// error responses back to their codes. mcp-go keeps no code for others.
var mcpgoSentinels = []struct {
	err  error
	code int64
}{
	{mcpgo.ErrParseError, mcpgo.PARSE_ERROR},
	{mcpgo.ErrInvalidRequest, mcpgo.INVALID_REQUEST},
	{mcpgo.ErrMethodNotFound, mcpgo.METHOD_NOT_FOUND},
	{mcpgo.ErrInvalidParams, mcpgo.INVALID_PARAMS},
	{mcpgo.ErrInternalError, mcpgo.INTERNAL_ERROR},
	{mcpgo.ErrRequestInterrupted, mcpgo.REQUEST_INTERRUPTED},
	{mcpgo.ErrResourceNotFound, mcpgo.RESOURCE_NOT_FOUND},
}

// mcpgoProtocolError recovers the code and message of a JSON-RPC error
// response from an error of the mcp-go client. The client turns a standard
// code into a sentinel error, wrapped as "SENTINEL: MESSAGE" when the
// message differs from the sentinel's text.
func mcpgoProtocolError(err error) (code int64, message string, ok bool) {
	var terr *mcpgotransport.Error
	if errors.As(err, &terr) {
		return 0, "", false
	}
	for _, s := range mcpgoSentinels {
		if !errors.Is(err, s.err) {
			continue
		}
		msg := err.Error()
		if prefix := s.err.Error() + ": "; len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
			msg = msg[len(prefix):]
		}
		return s.code, msg, true
	}
	return 0, "", false
}

func summarizeMCPGo(res *mcpgo.CallToolResult) string {
	var b resultBuilder
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcpgo.TextContent:
			b.text(c.Text)
		case mcpgo.ImageContent:
			b.media("image", c.MIMEType, decodedLen(c.Data))
		case mcpgo.AudioContent:
			b.media("audio", c.MIMEType, decodedLen(c.Data))
		case mcpgo.EmbeddedResource:
			switch rc := c.Resource.(type) {
			case mcpgo.TextResourceContents:
				b.resourceText(rc.URI, rc.MIMEType, rc.Text)
			case mcpgo.BlobResourceContents:
				b.resourceBlob(rc.URI, rc.MIMEType, decodedLen(rc.Blob))
			default:
				b.other(fmt.Sprintf("resource %T", rc))
			}
		case mcpgo.ResourceLink:
			b.link(c.URI)
		default:
			b.other(fmt.Sprintf("%T", c))
		}
	}
	b.isError(res.IsError)
	b.structured(res.StructuredContent)
	return b.String()
}

// decodedLen is the length of base64 data once decoded, or -1 if it is not
// valid base64.
func decodedLen(s string) int {
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return -1
	}
	return len(data)
}

// quietReader reports a read on a closed io.Pipe as EOF: the mcp-go stdio
// transport logs every read error but EOF and fs.ErrClosed through
// slog.Default, and offers no way to change its logger for NewIO.
type quietReader struct{ io.ReadCloser }

func (r quietReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if errors.Is(err, io.ErrClosedPipe) {
		err = io.EOF
	}
	return n, err
}
