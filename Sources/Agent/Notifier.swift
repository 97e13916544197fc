import DBus
import Foundation
import Logging

/// Desktop notifications through `org.freedesktop.Notifications` on the session bus, for the
/// moments a player should not miss: an invitation arrived, a game started, a game was won or
/// lost. Without a session bus (a headless Pi) it stays silent; a notification that fails is
/// logged, never fatal.
public actor Notifier {
    static let service = "org.freedesktop.Notifications"
    static let path: DBusObjectPath = "/org/freedesktop/Notifications"

    private let address: String?
    private let username: String
    private let logger: Logger
    private var connection: DBusConnection?

    /// - Parameter address: the session bus address; `DBUS_SESSION_BUS_ADDRESS` by default.
    public init(address: String? = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], username: String,
                logger: Logger = Logger(label: "nearplay.notify")) {
        self.address = address.flatMap { $0.isEmpty ? nil : $0 }
        self.username = username
        self.logger = logger
    }

    /// The notification an event deserves, if any: title and body.
    static func notification(for event: AgentEvent, me: String) -> (String, String)? {
        func id(_ id: Int64?, or missing: String = "?") -> String { id.map(String.init) ?? missing }
        switch event {
        case .invitationReceived(let player, let game, _):
            return ("Invitation from \(player ?? "a player")", "Game \(id(game)): `nearplay accept \(id(game, or: "ID"))` to play.")
        case .gameStarted(let game, _, _):
            return ("Game \(id(game)) started", "`nearplay play \(id(game, or: "ID"))` plays your next round.")
        case .gameFinished(let game, let winner, _):
            if winner == me { return ("You won!", "Game \(id(game)): your opponents' contacts are unlocked.") }
            if let winner { return ("\(winner) won", "Game \(id(game)) is over.") }
            return ("A draw", "Game \(id(game)) ended without a winner.")
        case .achievement(let title, _):
            return ("Achievement unlocked", "\(title ?? "A new achievement"): `nearplay achievements` shows them all.")
        case .tournamentFinished(let tournament, let winner, _) where winner == me:
            return ("You won tournament \(id(tournament))!", "Every entrant's unlocked players are yours for good.")
        default:
            return nil
        }
    }

    /// Notifies for the events that deserve it until the stream ends.
    public func run(_ events: AsyncStream<AgentEvent>) async {
        guard address != nil else { return }
        for await event in events {
            guard let (title, body) = Self.notification(for: event, me: username) else { continue }
            await notify(title: title, body: body)
        }
        connection?.close()
    }

    /// Sends one notification; returns its id, nil when it could not be shown.
    @discardableResult
    public func notify(title: String, body: String) async -> UInt32? {
        guard let address else { return nil }
        do {
            if connection == nil || connection?.isOpen == false {
                connection = try await DBusConnection.connect(address: address)
            }
            let reply = try await connection!.call(
                destination: Self.service, path: Self.path, interface: Self.service, member: "Notify",
                body: [.string("Nearplay"), .uint32(0), .string(""), .string(title), .string(body),
                       .array(element: "s", []), .dictionary(key: "s", value: "v", []), .int32(-1)],
                timeout: .seconds(2))
            if case .uint32(let id)? = reply.first { return id }
            return nil
        } catch {
            logger.info("could not show a desktop notification: \(error)")
            return nil
        }
    }
}
