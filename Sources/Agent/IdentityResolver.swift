import BeaconFrames
import Foundation
import GRDB
import LobbyClient
import Logging
import Ranging

/// Who a beacon identity belongs to, as far as this player may know.
public struct ResolvedPlayer: Codable, Sendable, Hashable {
    public var username: String
    public var firstName: String
    public var lastName: String
    /// The player's radio offsets as the lobby solved them from the crowd, when it has them.
    public var radioOffsets: RadioOffsets?

    public init(username: String, firstName: String, lastName: String, radioOffsets: RadioOffsets? = nil) {
        self.username = username
        self.firstName = firstName
        self.lastName = lastName
        self.radioOffsets = radioOffsets
    }

    public var displayName: String { "\(firstName) \(lastName)".trimmingCharacters(in: .whitespaces) }
}

/// Resolves beacon identities to player profiles through the lobby, with a cache in the agent's
/// store: hits are answered without the network, identities that belong to nobody (or to a
/// player who blocked us; the lobby answers both alike) are cached too, for a shorter time.
/// Concurrent questions about one identity share one request. A lobby that cannot be reached is
/// not an answer: nothing is cached and the next sighting asks again, at most every few seconds.
public actor IdentityResolver {
    public enum Answer: Sendable, Equatable {
        case player(ResolvedPlayer)
        /// Nobody this player may see advertises it.
        case nobody
        /// The lobby could not be asked; try again later.
        case unavailable
    }

    private let store: AgentStore
    private let lobby: LobbyClient
    private let ttl: Double
    private let negativeTTL: Double
    private let now: @Sendable () -> Double
    private let logger: Logger
    private var inFlight: [String: Task<Answer, Never>] = [:]
    private var lastFailure: [String: Double] = [:]
    /// Seconds before an identity whose lookup failed is asked about again.
    private let retryAfterFailure = 3.0
    /// In-memory copy of the cache, so a warm hit costs no database read.
    private var memory: [String: (answer: Answer, expires: Double)] = [:]
    /// Resolutions answered from the cache, and those that had to ask the lobby (for `nearplay metrics`).
    private var guessesSpentLogged: Double?
    public private(set) var cacheHits = 0
    public private(set) var cacheMisses = 0

    public init(store: AgentStore, lobby: LobbyClient, ttl: Double, negativeTTL: Double,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, logger: Logger = Logger(label: "nearplay.identity")) {
        self.store = store
        self.lobby = lobby
        self.ttl = ttl
        self.negativeTTL = negativeTTL
        self.now = now
        self.logger = logger
    }

    /// The player behind `identity`. Only iBeacon identities of players exist; others are nobody.
    public func resolve(_ identity: BeaconFrames.BeaconIdentity) async -> Answer {
        guard case .iBeacon = identity else { return .nobody }
        let key = identity.description
        let time = now()
        if let cached = memory[key], cached.expires > time {
            cacheHits += 1
            return cached.answer
        }
        if let stored = cachedAnswer(key, at: time) {
            memory[key] = stored
            cacheHits += 1
            return stored.answer
        }
        cacheMisses += 1
        if let failed = lastFailure[key], time - failed < retryAfterFailure { return .unavailable }
        if let task = inFlight[key] { return await task.value }
        let lobby = lobby
        let logger = logger
        let task = Task<Answer, Never> {
            do {
                let profile = try await lobby.resolve(identity)
                return .player(ResolvedPlayer(username: profile.username, firstName: profile.firstName, lastName: profile.lastName,
                                              radioOffsets: profile.radioOffsets.map(RadioOffsets.init)))
            } catch let error as LobbyClientError where error.status == 404 {
                return .nobody
            } catch let error as LobbyClientError where error.status == 429 && error.code == .tooManyUnknownIdentities {
                // The lobby answers only players met before until its hourly budget of unknown
                // identities refills, and this is none of them: nobody, until the negative cache
                // expires, rather than the same refusal every few seconds.
                await self.noteGuessesSpent(error)
                return .nobody
            } catch {
                logger.info("could not resolve \(key): \(error)")
                return .unavailable
            }
        }
        inFlight[key] = task
        let answer = await task.value
        inFlight[key] = nil
        switch answer {
        case .unavailable:
            lastFailure[key] = now()
        case .player, .nobody:
            lastFailure[key] = nil
            remember(key, answer)
        }
        return answer
    }

    /// Says once per negative-cache period that the lobby's budget of unknown identities is spent
    /// (a room full of beacons with the deployment's UUID that belong to nobody).
    private func noteGuessesSpent(_ error: LobbyClientError) {
        let time = now()
        if let logged = guessesSpentLogged, time - logged < negativeTTL { return }
        guessesSpentLogged = time
        logger.notice("the lobby answers only players met before for now (\(error.message)); identities it refused count as nobody for \(Int(negativeTTL)) s each")
    }

    /// Drops what is known about `username` (after blocking them, say), so the next sighting asks
    /// the lobby again.
    public func forget(username: String) {
        memory = memory.filter { if case .player(let p) = $0.value.answer { p.username != username } else { true } }
        try? store.database.write { try $0.execute(sql: "DELETE FROM identity WHERE username = ?", arguments: [username]) }
    }

    private func cachedAnswer(_ key: String, at time: Double) -> (answer: Answer, expires: Double)? {
        let row = try? store.database.read {
            try Row.fetchOne($0, sql: """
                SELECT username, firstName, lastName, expiresAt, transmitOffset, receiveOffset, transmitError, receiveError
                FROM identity WHERE beacon = ? AND expiresAt > ?
                """, arguments: [key, time])
        }
        guard let row else { return nil }
        let expires: Double = row["expiresAt"]
        guard let username: String = row["username"] else { return (.nobody, expires) }
        var offsets: RadioOffsets?
        if let transmit: Double = row["transmitOffset"], let receive: Double = row["receiveOffset"],
           let transmitError: Double = row["transmitError"], let receiveError: Double = row["receiveError"] {
            offsets = RadioOffsets(transmit: transmit, receive: receive, transmitError: transmitError, receiveError: receiveError)
        }
        return (.player(ResolvedPlayer(username: username, firstName: row["firstName"] ?? "", lastName: row["lastName"] ?? "",
                                       radioOffsets: offsets)), expires)
    }

    private func remember(_ key: String, _ answer: Answer) {
        var player: ResolvedPlayer?
        if case .player(let p) = answer { player = p }
        let offsets = player?.radioOffsets
        let expires = now() + (player == nil ? negativeTTL : ttl)
        memory[key] = (answer, expires)
        do {
            try store.database.write {
                try $0.execute(sql: """
                    INSERT INTO identity (beacon, username, firstName, lastName, expiresAt,
                                          transmitOffset, receiveOffset, transmitError, receiveError)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(beacon) DO UPDATE SET username = excluded.username, firstName = excluded.firstName,
                        lastName = excluded.lastName, expiresAt = excluded.expiresAt,
                        transmitOffset = excluded.transmitOffset, receiveOffset = excluded.receiveOffset,
                        transmitError = excluded.transmitError, receiveError = excluded.receiveError
                    """, arguments: [key, player?.username, player?.firstName, player?.lastName, expires,
                                     offsets?.transmit, offsets?.receive, offsets?.transmitError, offsets?.receiveError])
            }
        } catch {
            logger.warning("could not cache the identity \(key): \(error)")
        }
    }
}

extension RadioOffsets {
    /// The offsets as the lobby publishes them.
    init(_ published: LobbyRadioOffsets) {
        self.init(transmit: published.transmit, receive: published.receive,
                  transmitError: published.transmitError, receiveError: published.receiveError)
    }
}
