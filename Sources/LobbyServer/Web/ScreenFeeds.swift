import Foundation
import HTTPTypes
import Hummingbird
import Lobby
import NIOCore
import ServiceLifecycle
import Synchronization

/// The location screens' live streams (`/locations/{id}/live`, server-sent events): one reader per
/// location, however many screens watch it, and a bounded number of streams.
///
/// A location's feed reads the screen when this instance commits a write (``ChangeSignal``: a
/// verified score shows within a read's time) and once a second whatever happens (what another
/// instance wrote, players leaving, tournaments starting), at most once per ``minimumSpacing``, and
/// renders the board with the page's own template when it changed; every watcher is sent those
/// same bytes, and a comment line every ``keepAlive`` keeps proxies from closing a quiet stream
/// and finds browsers that have gone away. The feed ends when its last watcher leaves.
///
/// The streams are public: a client address may hold ``maximumPerAddress`` of them and the
/// instance ``maximumTotal``; beyond that the stream is refused with 429.
///
/// The readers are child tasks of ``run()``, a service beside the HTTP server
/// (`buildLobbyApplication` runs it): stopping the service ends them, and no reader outlives the
/// server. A stream asked for while it does not run waits for it.
final class ScreenFeeds: Service {
    static let minimumSpacing: Duration = .milliseconds(100)
    static let poll: Duration = .seconds(1)
    static let keepAlive: Duration = .seconds(15)
    static let maximumPerAddress = 4
    static let maximumTotal = 1000

    private struct Feed {
        /// Tells this feed from a later one of the same location.
        var id = 0
        /// Finished by the last watcher to leave: its reader is then cancelled.
        var stop: AsyncStream<Void>.Continuation?
        var watchers: [Int: AsyncStream<String>.Continuation] = [:]
        /// The last board sent, for a watcher that arrives between changes.
        var latest: String?
    }

    private struct State {
        var feeds: [Int64: Feed] = [:]
        /// Every open stream's client address, by its id.
        var streams: [Int: String] = [:]
        var perAddress: [String: Int] = [:]
        var nextId = 0
    }

    /// A reader ``run()`` is asked to start.
    private struct Reader: Sendable {
        var location: Int64
        var feed: Int
        var stopped: AsyncStream<Void>
    }

    private let store: LobbyStore
    let templates: WebTemplates
    private let state = Mutex(State())
    private let readers: AsyncStream<Reader>
    private let startReader: AsyncStream<Reader>.Continuation

    init(store: LobbyStore, templates: WebTemplates) {
        self.store = store
        self.templates = templates
        (readers, startReader) = AsyncStream.makeStream()
    }

    /// Runs each location's reader, as a child task, until graceful shutdown; then the readers
    /// end their watchers' streams and return, and so does this. Run it once.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await reader in readers.cancelOnGracefulShutdown() {
                group.addTask {
                    // The reader, until it ends by itself or its last watcher leaves.
                    await withTaskGroup(of: Void.self) { running in
                        running.addTask { await self.read(reader.location, feed: reader.feed) }
                        running.addTask { for await _ in reader.stopped {} }
                        await running.next()
                        running.cancelAll()
                    }
                }
            }
            // Shutting down: the readers end every stream now rather than at their next wake.
            group.cancelAll()
        }
        startReader.finish()
    }

    /// Streams currently open (for tests).
    var streamCount: Int { state.withLock { $0.streams.count } }
    /// Locations currently read (for tests).
    var feedCount: Int { state.withLock { $0.feeds.count } }

    /// The stream of `location` for a client at `address`, as a response; `location` must exist.
    func response(location: Int64, address: String) throws -> Response {
        let (id, events, end) = try watch(location, address: address)
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                // nginx passes each event on at once instead of buffering the stream.
                .xAccelBuffering: "no",
            ],
            body: ResponseBody { writer in
                defer { self.leave(location, id: id, address: address) }
                // A browser that lost the stream asks again after 2 s (EventSource's `retry`).
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                // On shutdown the stream ends even if its feed is stuck (waiting for the database,
                // say): the server is not kept waiting for a response that would never end.
                try await withGracefulShutdownHandler {
                    for await event in events {
                        try await writer.write(ByteBuffer(string: event))
                    }
                } onGracefulShutdown: {
                    end.finish()
                }
                try await writer.finish(nil)
            })
    }

    private func watch(_ location: Int64, address: String) throws -> (Int, AsyncStream<String>, AsyncStream<String>.Continuation) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let id: Int? = state.withLock { state in
            guard state.streams.count < Self.maximumTotal, state.perAddress[address, default: 0] < Self.maximumPerAddress else { return nil }
            state.nextId += 1
            state.streams[state.nextId] = address
            state.perAddress[address, default: 0] += 1
            var feed = state.feeds[location] ?? Feed()
            feed.watchers[state.nextId] = continuation
            if let latest = feed.latest { continuation.yield(latest) }
            if feed.stop == nil {
                let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
                feed.id = state.nextId
                feed.stop = stop
                startReader.yield(Reader(location: location, feed: feed.id, stopped: stopped))
            }
            state.feeds[location] = feed
            return state.nextId
        }
        guard let id else {
            throw WebProblem(.tooManyRequests, "Too many screens",
                             "This address already watches \(Self.maximumPerAddress) screens live (or the lobby its \(Self.maximumTotal)): close one, then reload.")
        }
        return (id, stream, continuation)
    }

    private func leave(_ location: Int64, id: Int, address: String) {
        let stop: AsyncStream<Void>.Continuation? = state.withLock { state in
            if state.streams.removeValue(forKey: id) != nil {
                state.perAddress[address, default: 1] -= 1
                if state.perAddress[address] == 0 { state.perAddress[address] = nil }
            }
            guard state.feeds[location]?.watchers.removeValue(forKey: id) != nil,
                  state.feeds[location]?.watchers.isEmpty == true else { return nil }
            return state.feeds.removeValue(forKey: location)?.stop
        }
        stop?.finish()
    }

    private func broadcast(_ location: Int64, _ event: String, latest: Bool) {
        state.withLock { state in
            guard var feed = state.feeds[location] else { return }
            if latest { feed.latest = event }
            for continuation in feed.watchers.values { continuation.yield(event) }
            state.feeds[location] = feed
        }
    }

    /// The location's reader: runs while anyone watches (cancelled by the last to leave); when the
    /// location cannot be read any more, or the server shuts down, every watcher's stream ends
    /// (the browsers ask again).
    private func read(_ location: Int64, feed feedId: Int) async {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let changes = store.changes.watch()
        await withDiscardingTaskGroup { wakers in
            wakers.addTask { for await _ in changes { wake.yield() } }
            wakers.addTask {
                while true {
                    do { try await Task.sleep(for: Self.poll) } catch { return }
                    wake.yield()
                }
            }
            wake.yield()
            await show(location, wakes: wakes)
            wakers.cancelAll()
        }
        let watchers = state.withLock { state -> [AsyncStream<String>.Continuation] in
            guard state.feeds[location]?.id == feedId else { return [] }
            return state.feeds.removeValue(forKey: location)?.watchers.values.map { $0 } ?? []
        }
        for continuation in watchers { continuation.finish() }
    }

    /// Reads the screen at each wake and sends it when it changed (a keep-alive when it has not
    /// for ``keepAlive``), until the reader is cancelled, the server shuts down or the location
    /// cannot be read.
    private func show(_ location: Int64, wakes: AsyncStream<Void>) async {
        var shown: LocationScreen?
        var lastSent = ContinuousClock.now
        for await _ in wakes {
            // Cancelled: the last watcher left (its feed is gone, so no stream is ended), or the
            // server is shutting down: every stream ends, so the server is not kept waiting for
            // responses that would never end.
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            do {
                let screen = try await store.locationScreen(location)
                var compared = screen
                compared.at = .distantPast
                if compared != shown {
                    shown = compared
                    broadcast(location, event(screen), latest: true)
                    lastSent = .now
                } else if ContinuousClock.now - lastSent >= Self.keepAlive {
                    broadcast(location, ": still here\n\n", latest: false)
                    lastSent = .now
                }
            } catch {
                // The location is gone or the database failed: end every watcher's stream (their
                // browsers ask again in 2 s, and find the location or a 404).
                return
            }
            do { try await Task.sleep(for: Self.minimumSpacing) } catch { return }
        }
    }

    /// One `screen` event: the board's HTML, one `data:` line per line of it.
    private func event(_ screen: LocationScreen) -> String {
        let board = templates.render("location-board", LocationPage(screen, viewer: nil))
            .replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let lines = board.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)" }
        return "event: screen\n" + lines.joined(separator: "\n") + "\n\n"
    }
}
