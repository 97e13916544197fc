import BeaconKeys
import Foundation
import LobbyDatabase
import HummingbirdBcrypt
import Minigames

/// Fills a store with synthetic players, sessions, unlocks, pending invitations and open games for
/// a load test, respecting every rule (limits, one open game per pair), and returns the plan of
/// requests that stay valid during the run: which token invites whom, answers which invitation,
/// scores in which round, views whose statistics.
public struct LobbySeeder: Sendable {
    public struct Plan: Sendable {
        public var tokens: [String] = []
        public var usernames: [String] = []
        public var beacons: [String] = []
        /// (inviter, invitee) player indexes; the inviter has unlocked the invitee.
        public var invites: [(Int, Int)] = []
        /// (invitee, invitation id, accept?).
        public var answers: [(Int, Int64, Bool)] = []
        /// (player, game id, round, recording index, key).
        public var scores: [(Int, Int64, Int, Int, String)] = []
        /// Recordings of Screamer rounds the lobby verifies, with the score each gives (as JSON
        /// without spaces): the score games' rounds are all Screamer rounds of 5 s.
        public var recordings: [(score: Int, json: String)] = []
        /// (viewer, target) player indexes; the viewer has unlocked the target.
        public var stats: [(Int, Int)] = []

        /// The plan as text, one item a line, indexes 1-based (read by Benchmarks/lobby-load.lua):
        /// `T token`, `U username`, `B uuid/major/minor` (one each per player, in order), then
        /// `R score recording-json`, `I inviter invitee`, `A invitee invitation accept|decline`,
        /// `S player game round recording key` (the recording by its `R` line), `V viewer target`.
        public func text() -> String {
            var lines: [String] = []
            lines += tokens.map { "T \($0)" }
            lines += usernames.map { "U \($0)" }
            lines += beacons.map { "B \($0)" }
            lines += recordings.map { "R \($0.score) \($0.json)" }
            lines += invites.map { "I \($0.0 + 1) \($0.1 + 1)" }
            lines += answers.map { "A \($0.0 + 1) \($0.1) \($0.2 ? "accept" : "decline")" }
            lines += scores.map { "S \($0.0 + 1) \($0.1) \($0.2) \($0.3 + 1) \($0.4)" }
            lines += stats.map { "V \($0.0 + 1) \($0.1 + 1)" }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    let store: LobbyStore

    public init(store: LobbyStore) { self.store = store }

    /// Seeds for `operations` invitations, as many answers, as many score submissions and
    /// statistics views. Needs an empty store and default limits.
    public func seed(operations: Int) async throws -> Plan {
        let configuration = store.configuration
        precondition(configuration.maximumOpenGames >= 5 && configuration.maximumOpenInvitations >= 10)
        let operations = max(60, operations / 60 * 60)
        let inviters = operations / 5, invitees = operations / 10
        let games = operations / 6, scorers = games / 2
        let total = 2 * (inviters + invitees) + scorers
        let hash = Bcrypt.hash("seeded-password", cost: 4)
        let uuid = configuration.deploymentUUID.uuidString
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let recordings = try [0, 120, 250, 380, 500, 640, 777, 910, 1000].compactMap { score -> (score: Int, json: String)? in
            guard let recording = SyntheticRecording.scoring(score, game: Self.scoredRound.name, duration: Self.scoredRound.duration) else { return nil }
            return (score, String(decoding: try encoder.encode(recording), as: UTF8.self))
        }
        guard !recordings.isEmpty else {
            throw LobbyError(.conflict, .noRecordings, "No Screamer recording could be made for the seeded scores.")
        }
        let (plan, secrets) = try await store.write { context in
            let db = context.db
            var plan = Plan()
            var secrets: [(Int64, BeaconSecret)] = []
            plan.recordings = recordings
            var ids: [Int64] = []
            let start = try db.fetchValue(Int.self, "SELECT COUNT(*) FROM player") ?? 0
            // Players of a lobby in use: established accounts (not held to the new accounts'
            // rules), whose agents are on the air (their identities resolve) as the load starts.
            let established = context.now.addingTimeInterval(-configuration.newAccountAge - 86400)
            let period = configuration.rotationPeriod.index(at: context.now)
            for i in 0..<total {
                let index = start + i + 65536
                let secret = BeaconSecret.random()
                var player = PlayerRecord(
                    id: nil, username: "seed\(start + i)", firstName: "Seed", lastName: "Player \(i)",
                    email: "seed\(start + i)@example.org", passwordHash: hash, beaconMajor: index / 65536,
                    beaconMinor: index % 65536, photoVersion: 0, createdAt: established,
                    usernameSkeleton: UsernameSkeleton.of("seed\(start + i)"), activeAt: context.now,
                    beaconSecret: Data(secret.bytes))
                try player.insertNumbered(db)
                secrets.append((player.id!, secret))
                ids.append(player.id!)
                let token = "seed-\(i)-" + UUID().uuidString
                var session = SessionRecord(
                    id: nil, playerId: player.id!, tokenHash: LobbyStore.tokenHash(token), createdAt: context.now,
                    expiresAt: context.now.addingTimeInterval(configuration.sessionLifetime))
                try session.insertNumbered(db)
                plan.tokens.append(token)
                plan.usernames.append(player.username!)
                // What the player advertises as the load starts (its rotating identity resolves
                // through the next period too).
                let (major, minor) = RotatingIdentity.player(secret, period: period)
                plan.beacons.append("\(uuid)/\(major)/\(minor)")
            }
            // Group offsets: [inviters | invitees | answer-inviters | answer-invitees | scorers].
            let invitersAt = 0, inviteesAt = inviters, answerersAt = inviters + invitees
            let answerInviteesAt = 2 * inviters + invitees, scorersAt = 2 * (inviters + invitees)
            func pair(_ k: Int, _ a: Int, _ b: Int) -> (Int, Int) {
                let x = k % a
                return (x, (x + k / a) % b)
            }
            for k in 0..<operations {
                let (x, y) = pair(k, inviters, invitees)
                let (inviter, invitee) = (invitersAt + x, inviteesAt + y)
                try UnlockRecord(ownerId: ids[inviter], unlockedId: ids[invitee], persistent: false, since: context.now)
                    .insert(db, ignoringConflicts: true)
                plan.invites.append((inviter, invitee))
                plan.stats.append((inviter, invitee))
            }
            var accepted: [Int: Int] = [:]
            for k in 0..<operations {
                let (x, y) = pair(k, inviters, invitees)
                let (inviter, invitee) = (answerersAt + x, answerInviteesAt + y)
                let gameId = try insertGame(db, context.now, configuration, [ids[inviter], ids[invitee]], state: .pending)
                let accept = accepted[invitee, default: 0] < configuration.maximumOpenGames - 1
                if accept { accepted[invitee, default: 0] += 1 }
                plan.answers.append((invitee, gameId, accept))
            }
            for g in 0..<games {
                let x = g % scorers
                let y = (x + 1 + g / scorers) % scorers
                let players = [scorersAt + x, scorersAt + y]
                let gameId = try insertGame(db, context.now, configuration, players.map { ids[$0] }, state: .open)
                for (p, player) in players.enumerated() {
                    for n in 1...configuration.roundsPerGame {
                        let k = (g * 2 + p) * configuration.roundsPerGame + n
                        plan.scores.append((player, gameId, n, (k * 7919) % recordings.count, "seed-\(gameId)-\(p)-\(n)"))
                    }
                }
            }
            return (plan, secrets)
        }
        for (id, secret) in secrets { store.identities.add(.player, id, secret: secret) }
        return plan
    }

    /// The minigame of the rounds scored during a load run: Screamer's recordings are the
    /// smallest (100 windows, about 6 KB of JSON).
    static let scoredRound = Screamer()

    private func insertGame(
        _ db: any SQLSession, _ now: Date, _ configuration: LobbyConfiguration, _ players: [Int64], state: GameState
    ) throws -> Int64 {
        var game = GameRecord(
            id: nil, inviterId: players[0], state: state, createdAt: now,
            expiresAt: now.addingTimeInterval(configuration.invitationLifetime), openedAt: state == .open ? now : nil)
        try game.insertRow(db)
        try MembershipRecord(gameId: game.id!, playerId: players[0], role: .inviter, response: .accepted, respondedAt: now).insertRow(db)
        for player in players.dropFirst() {
            try MembershipRecord(
                gameId: game.id!, playerId: player, role: .invitee, response: state == .open ? .accepted : .pending,
                respondedAt: state == .open ? now : nil).insertRow(db)
        }
        if state == .open {
            for n in 1...max(1, configuration.roundsPerGame) {
                try RoundRecord(gameId: game.id!, n: n, minigame: Self.scoredRound.name, duration: Self.scoredRound.duration).insertRow(db)
            }
        } else {
            try store.drawRounds(db, gameId: game.id!)
        }
        return game.id!
    }
}
