// A Grosstarock Arena bot in C++ that plays a uniformly random legal action.
//
//   arena_random_bot [--address HOST:PORT] [--token TOKEN] [--name NAME]
//
// The address and the seat token default to the environment variables ARENA_ADDRESS and
// ARENA_TOKEN, which `arena play --bot CMD` sets. The generator is seeded from ARENA_BOT_SEED
// when it is set (reproducible games), else from std::random_device.
//
// The conversation (proto/arena/v1/arena.proto): one BotService.Play stream per seat, with
// `authorization: Bearer <token>` metadata; Hello first; answer every DecisionRequest with an
// ActionReply carrying its request_id; after an ActionRejected for the pending request, answer
// again; MatchEnd ends the match. A stream that breaks before MatchEnd is dialled again with the
// same token (the server sends MatchStart and the pending request again); UNAUTHENTICATED,
// PERMISSION_DENIED, INVALID_ARGUMENT and the like are final. Fields and message kinds this
// build does not know are skipped by protobuf and by the `default:` of the switch below.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "arena/v1/arena.grpc.pb.h"

namespace v1 = grosstarock::arena::v1;

namespace {

constexpr uint32_t kProtocolVersion = 1;
constexpr auto kReconnectWindow = std::chrono::seconds(30);

struct Options {
  std::string address;
  std::string token;
  std::string name = "random-cpp";
};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options options{env("ARENA_ADDRESS"), env("ARENA_TOKEN")};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "usage: " << argv[0] << " [--address HOST:PORT] [--token TOKEN] [--name NAME]\n";
      return std::nullopt;
    }
    std::string value = argv[++i];
    if (arg == "--address") {
      options.address = value;
    } else if (arg == "--token") {
      options.token = value;
    } else if (arg == "--name") {
      options.name = value;
    } else {
      std::cerr << "unknown argument " << arg << "\n";
      return std::nullopt;
    }
  }
  if (options.address.empty() || options.token.empty()) {
    std::cerr << "no server address or seat token: pass --address and --token, or set ARENA_ADDRESS "
                 "and ARENA_TOKEN\n";
    return std::nullopt;
  }
  return options;
}

bool same_action(const v1::Action& a, const v1::Action& b) {
  return a.type() == b.type() && a.card() == b.card() && a.suit() == b.suit() && a.name() == b.name();
}

// Not ABORTED: the server ends a stream so when another connection with the same token took the
// seat; dialling again would take it back (docs/PROTOCOL.md).
bool retryable(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::OK:  // closed without MatchEnd
      return true;
    default:
      return false;
  }
}

class RandomBot {
 public:
  explicit RandomBot(std::mt19937_64 rng) : rng_(rng) {}

  // A random legal action this request has not had rejected yet; nothing when all were.
  std::optional<v1::Action> choose(const v1::DecisionRequest& request, const std::vector<v1::Action>& tried) {
    std::vector<const v1::Action*> open;
    for (const auto& action : request.legal_actions()) {
      bool used = false;
      for (const auto& t : tried) used = used || same_action(t, action);
      if (!used) open.push_back(&action);
    }
    if (open.empty()) return std::nullopt;
    std::uniform_int_distribution<size_t> pick(0, open.size() - 1);
    return *open[pick(rng_)];
  }

 private:
  std::mt19937_64 rng_;
};

struct Session {
  explicit Session(RandomBot random) : bot(std::move(random)) {}

  RandomBot bot;
  std::optional<v1::DecisionRequest> pending;
  std::vector<v1::Action> tried;
  uint32_t seat = 0;
  std::vector<int64_t> scores;  // int64 on the wire: Danish pots grow without bound
  std::string termination;
};

using Stream = grpc::ClientReaderWriter<v1::BotMessage, v1::ServerMessage>;

void answer(Stream& stream, Session& session) {
  const v1::DecisionRequest& request = *session.pending;
  std::optional<v1::Action> action = session.bot.choose(request, session.tried);
  if (!action) return;  // every legal action was rejected: nothing left to try
  session.tried.push_back(*action);
  v1::BotMessage reply;
  reply.mutable_action()->set_request_id(request.request_id());
  *reply.mutable_action()->mutable_action() = *action;
  stream.Write(reply);
}

// One stream until it ends: true at MatchEnd; `progress` tells whether anything arrived.
bool play_stream(v1::BotService::Stub& stub, const Options& options, Session& session, grpc::Status& status,
                 bool& progress) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + options.token);
  std::unique_ptr<Stream> stream = stub.Play(&context);
  v1::BotMessage hello;
  hello.mutable_hello()->set_bot_name(options.name);
  hello.mutable_hello()->set_bot_version("0.1.0");
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  stream->Write(hello);

  v1::ServerMessage message;
  bool ended = false;
  while (!ended && stream->Read(&message)) {
    progress = true;
    switch (message.kind_case()) {
      case v1::ServerMessage::kMatchStart:
        session.seat = message.match_start().seat();
        break;
      case v1::ServerMessage::kRequest:
        // A new request, or the pending one sent again after a reconnection: answer it afresh.
        session.pending = message.request();
        session.tried.clear();
        answer(*stream, session);
        break;
      case v1::ServerMessage::kRejected:
        std::cerr << options.name << ": request " << message.rejected().request_id()
                  << " rejected: " << message.rejected().reason() << "\n";
        if (session.pending && session.pending->request_id() == message.rejected().request_id()) {
          answer(*stream, session);
        }
        break;
      case v1::ServerMessage::kMatchEnd:
        session.scores.assign(message.match_end().scores().begin(), message.match_end().scores().end());
        session.termination = message.match_end().termination();
        ended = true;
        break;
      default:  // EventBatch, or a kind from a later version of the protocol
        break;
    }
  }
  stream->WritesDone();
  if (ended) context.TryCancel();  // the server closes after MatchEnd; do not wait for it
  status = stream->Finish();
  return ended;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = parse_args(argc, argv);
  if (!options) return 2;

  std::mt19937_64 rng;
  std::string seed = env("ARENA_BOT_SEED");
  if (!seed.empty()) {
    rng.seed(std::hash<std::string>{}(seed));
  } else {
    rng.seed(std::random_device{}());
  }
  Session session(RandomBot{rng});

  // The first redial goes at once (a pending decision's clock runs while the stream is down),
  // then 100 ms, doubling up to 5 s.
  auto delay = std::chrono::milliseconds(0);
  auto broken_since = std::chrono::steady_clock::now();
  for (;;) {
    // A connection of its own: gRPC's core would otherwise hand the new channel the connection of
    // one still alive, and the bot dials again precisely to get a new one.
    grpc::ChannelArguments own_connection;
    own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel =
        grpc::CreateCustomChannel(options->address, grpc::InsecureChannelCredentials(), own_connection);
    auto stub = v1::BotService::NewStub(channel);
    grpc::Status status;
    bool progress = false;
    if (play_stream(*stub, *options, session, status, progress)) {
      std::cerr << options->name << ": " << session.termination << "; seat " << session.seat << "; scores";
      for (int64_t score : session.scores) std::cerr << " " << score;
      std::cerr << "\n";
      return 0;
    }
    if (!retryable(status.error_code())) {
      std::cerr << options->name << ": stream ended with status " << status.error_code() << ": "
                << status.error_message() << "\n";
      return 2;
    }
    auto now = std::chrono::steady_clock::now();
    if (progress) {
      broken_since = now;
      delay = std::chrono::milliseconds(0);
    }
    if (now - broken_since > kReconnectWindow) {
      std::cerr << options->name << ": no stream to " << options->address << " for 30 s\n";
      return 2;
    }
    std::this_thread::sleep_for(delay);
    delay = std::clamp(delay * 2, std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
  }
}
