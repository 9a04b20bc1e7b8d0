// A minimal Grosstarock Arena bot in Go: it answers every decision with the first legal action.
//
// It follows docs/PROTOCOL.md: one BotService/Play stream with the seat token as a Bearer
// credential, Hello first, an ActionReply for each DecisionRequest, another legal action after an
// ActionRejected of the pending request, and a new stream with the same token when the stream
// breaks before MatchEnd. Build it with clients/go/build.sh (the Debian packages are listed
// there); run it as `arena_go_bot` with ARENA_ADDRESS and ARENA_TOKEN set, as `arena play` does,
// or with --address and --token. Exit status: 0 after MatchEnd, 2 when the server refuses the
// seat or no stream could be opened for 30 s.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	arenav1 "github.com/grosstarock-arena/arena/proto/arena/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	protocolVersion = 1
	// How long to keep dialling without a message from the server before giving up.
	reconnectWindow = 30 * time.Second
	// The first redial goes at once (a pending decision's clock runs while the stream is down),
	// then firstBackoff, doubling up to maxBackoff.
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// Statuses after which the bot dials again with the same token (docs/PROTOCOL.md, section 6).
var retryable = map[codes.Code]bool{
	codes.Unavailable:      true,
	codes.Canceled:         true,
	codes.Unknown:          true,
	codes.Internal:         true,
	codes.DeadlineExceeded: true,
	codes.OK:               true, // the stream ended without MatchEnd
}

// session is what survives a broken stream: the pending request and the actions tried for it.
type session struct {
	name    string
	token   string
	pending *arenav1.DecisionRequest
	tried   int // legal actions of the pending request already sent
	seat    uint32
	end     *arenav1.MatchEnd
}

// outcome of one stream that did not end with MatchEnd.
type outcome struct {
	code       codes.Code
	message    string
	progress   bool          // a message was received on the stream
	retryAfter time.Duration // the retry-after-ms trailer, 0 when absent
}

func main() {
	address := flag.String("address", os.Getenv("ARENA_ADDRESS"), "the server, host:port (default $ARENA_ADDRESS)")
	token := flag.String("token", os.Getenv("ARENA_TOKEN"), "the seat token (default $ARENA_TOKEN)")
	name := flag.String("name", "go-first-legal", "the bot's name in Hello")
	flag.Parse()
	if err := checkAddress(*address); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *name, err)
		os.Exit(2)
	}
	if *token == "" {
		fmt.Fprintf(os.Stderr, "%s: no seat token: pass --token or set ARENA_TOKEN\n", *name)
		os.Exit(2)
	}
	os.Exit(run(*address, &session{name: *name, token: *token}))
}

// checkAddress refuses a target without a port: gRPC would quietly dial port 443.
func checkAddress(address string) error {
	if address == "" {
		return fmt.Errorf("no server address: pass --address or set ARENA_ADDRESS")
	}
	if strings.HasPrefix(address, "unix:") {
		return nil
	}
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("address %q: expected host:port (%v)", address, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("address %q: the port must be a number from 1 to 65535", address)
	}
	return nil
}

func run(address string, s *session) int {
	delay := time.Duration(0)
	brokenSince := time.Now()
	for {
		conn, err := grpc.Dial(address, grpc.WithInsecure())
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: cannot dial %s: %v\n", s.name, address, err)
			return 2
		}
		out := play(arenav1.NewBotServiceClient(conn), s)
		conn.Close() // a new connection for the next stream
		if s.end != nil {
			fmt.Fprintf(os.Stderr, "%s: %s; seat %d; scores %v\n", s.name, s.end.Termination, s.seat, s.end.Scores)
			return 0
		}
		switch {
		case out.code == codes.ResourceExhausted:
			// A flood or a full queue: wait as told, at least 1 s, then dial again.
			delay = out.retryAfter
			if delay < time.Second {
				delay = time.Second
			}
		case !retryable[out.code]:
			fmt.Fprintf(os.Stderr, "%s: stream ended with status %s: %s\n", s.name, out.code, out.message)
			return 2
		}
		now := time.Now()
		if out.progress {
			brokenSince = now
			if out.code != codes.ResourceExhausted {
				delay = 0
			}
		}
		if now.Sub(brokenSince) > reconnectWindow {
			fmt.Fprintf(os.Stderr, "%s: no stream to %s for %s (%s: %s)\n", s.name, address, reconnectWindow, out.code, out.message)
			return 2
		}
		fmt.Fprintf(os.Stderr, "%s: stream broken (%s: %s); dialling again in %s\n", s.name, out.code, out.message, delay)
		time.Sleep(delay)
		if delay *= 2; delay < firstBackoff {
			delay = firstBackoff
		} else if delay > maxBackoff {
			delay = maxBackoff
		}
	}
}

// play runs one stream until MatchEnd (s.end set) or until it breaks.
func play(client arenav1.BotServiceClient, s *session) outcome {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token)
	stream, err := client.Play(ctx)
	if err != nil {
		st := status.Convert(err)
		return outcome{code: st.Code(), message: st.Message()}
	}
	hello := &arenav1.BotMessage{Kind: &arenav1.BotMessage_Hello{Hello: &arenav1.Hello{
		BotName: s.name, BotVersion: "0.1.0", ProtocolVersion: protocolVersion,
	}}}
	// A failed Send shows up as the status of the next Recv.
	_ = stream.Send(hello)
	progress := false
	for {
		message, err := stream.Recv()
		if err != nil {
			out := outcome{progress: progress}
			if err == io.EOF {
				out.code, out.message = codes.OK, "the stream ended without MatchEnd"
			} else {
				st := status.Convert(err)
				out.code, out.message = st.Code(), st.Message()
			}
			if values := stream.Trailer().Get("retry-after-ms"); len(values) > 0 {
				if ms, err := strconv.Atoi(values[0]); err == nil && ms > 0 {
					out.retryAfter = time.Duration(ms) * time.Millisecond
				}
			}
			return out
		}
		progress = true
		switch kind := message.Kind.(type) {
		case *arenav1.ServerMessage_MatchStart:
			s.seat = kind.MatchStart.Seat
		case *arenav1.ServerMessage_Request:
			request := kind.Request
			// After a reconnection the pending request comes again: answer it afresh.
			s.pending, s.tried = request, 0
			s.answer(stream)
		case *arenav1.ServerMessage_Rejected:
			// A rejection of another request id is not about this bot's answer: ignore it.
			if s.pending != nil && kind.Rejected.RequestId == s.pending.RequestId {
				s.answer(stream)
			}
		case *arenav1.ServerMessage_MatchEnd:
			s.end = kind.MatchEnd
			_ = stream.CloseSend()
			return outcome{code: codes.OK, progress: true}
		default:
			// Events, and kinds of later protocol versions: the view holds what matters.
		}
	}
}

// answer sends the next legal action of the pending request not tried yet.
func (s *session) answer(stream arenav1.BotService_PlayClient) {
	legal := s.pending.LegalActions
	if s.tried >= len(legal) {
		return // every legal action was refused: the fault policy plays for the seat
	}
	reply := &arenav1.BotMessage{Kind: &arenav1.BotMessage_Action{Action: &arenav1.ActionReply{
		RequestId: s.pending.RequestId, // a uint64, echoed as it came
		Action:    legal[s.tried],
	}}}
	s.tried++
	_ = stream.Send(reply)
}
