import Foundation
import HTTPTypes
import Hummingbird
import Lobby
import NIOCore
import ServiceLifecycle

/// `/locations/{id}/live`: the screen's board as server-sent events. The board is sent when the
/// stream opens and again whenever it changes, as the HTML the page itself renders it with, so the
/// page's script only swaps it in (one renderer, escaped by the template).
///
/// It reads the location again when this instance commits a write (``ChangeSignal``: a verified
/// score shows within a read's time) and once a second whatever happens (what another instance
/// wrote, players leaving, tournaments starting), and sends only what differs. Bursts are read
/// once per ``minimumSpacing``. A comment line every ``keepAlive`` keeps proxies from closing a
/// quiet stream and finds a browser that has gone away.
struct ScreenStream {
    let store: LobbyStore
    let templates: WebTemplates
    let location: Int64
    let first: LocationScreen

    static let minimumSpacing: Duration = .milliseconds(100)
    static let poll: Duration = .seconds(1)
    static let keepAlive: Duration = .seconds(15)

    func response() -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                // nginx passes each event on at once instead of buffering the stream.
                .xAccelBuffering: "no",
            ],
            body: ResponseBody { writer in
                try await stream(&writer)
                try await writer.finish(nil)
            })
    }

    private func stream(_ writer: inout some ResponseBodyWriter) async throws {
        // A browser that lost the stream asks again after 2 s (EventSource's `retry`).
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        var shown = first
        shown.at = .distantPast
        try await writer.write(ByteBuffer(string: event(first)))
        var lastWrite = ContinuousClock.now
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            let changes = store.changes.watch()
            group.addTask { for await _ in changes { wake.yield() } }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: Self.poll)
                    wake.yield()
                }
            }
            for await _ in wakes {
                if Task.isCancelled || Task.isShuttingDownGracefully { break }
                let screen = try await store.locationScreen(location)
                var compared = screen
                compared.at = .distantPast
                if compared != shown {
                    shown = compared
                    try await writer.write(ByteBuffer(string: event(screen)))
                    lastWrite = .now
                } else if ContinuousClock.now - lastWrite >= Self.keepAlive {
                    try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    lastWrite = .now
                }
                try await Task.sleep(for: Self.minimumSpacing)
            }
            group.cancelAll()
        }
    }

    /// One `screen` event: the board's HTML, one `data:` line per line of it.
    private func event(_ screen: LocationScreen) -> String {
        let board = templates.render("location-board", LocationPage(screen, viewer: nil))
        let lines = board.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)" }
        return "event: screen\n" + lines.joined(separator: "\n") + "\n\n"
    }
}
