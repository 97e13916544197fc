import Foundation
import LobbyDatabase
import Minigames

/// Quickdraw's signal as revealed to a player when its round starts.
public struct SignalReveal: Codable, Sendable, Equatable {
    public var round: Int
    /// Seconds from the start of the round (the reveal) to the signal.
    public var signalTime: Double
    /// The lobby's time of the (first) reveal, which the round is held to.
    public var revealedAt: Date

    public init(round: Int, signalTime: Double, revealedAt: Date) {
        self.round = round
        self.signalTime = signalTime
        self.revealedAt = revealedAt
    }
}

extension LobbyStore {
    /// Seconds a claimed reaction may exceed what the lobby's clock allows: the clock is read once
    /// per transaction, and SQLite stores its times as doubles; 50 ms is far above both and far
    /// below the 1.4 s a Quickdraw score spans.
    public static let reactionClockTolerance = 0.05

    /// Reveals Quickdraw's signal in round `n` of game `id` to the player, who asks when the round
    /// starts, and records the lobby's time of the reveal: the player's reaction is then held to
    /// the lobby's clock (``checkReaction(_:terms:of:)``). Asking again answers the first reveal.
    /// `conflict`, `noSignal` for a round without a signal.
    public func revealSignal(_ playerId: Int64, game id: Int64, round n: Int) async throws -> SignalReveal {
        try await write { context in
            let db = context.db
            // Two reveals of one round must answer the same time (the second finds the first's
            // row instead of colliding with it), and the game must not finish or be cancelled
            // between the check that it is open and the reveal: the player, then the game.
            try db.lock("player", ids: [playerId])
            try db.lock("game", ids: [id])
            guard let game = try Query.game(db, id: id),
                  let membership = try Query.membership(db, game: id, player: playerId) else { throw LobbyError.gameNotFound(id) }
            guard membership.response == .accepted else {
                throw LobbyError(.forbidden, .notYourGame, "You did not accept game \(id), so you cannot play its rounds.")
            }
            guard let round = try db.fetchOne("SELECT minigame, signalDelay FROM round WHERE gameId = ? AND n = ?", id, n) else {
                throw LobbyError(.notFound, .roundNotFound, "Game \(id) has no round \(n).")
            }
            guard let delay = try round.get(1, as: Double?.self) else {
                throw LobbyError.noSignal(round: n, minigame: try round.get(0, as: MinigameName.self), of: "game \(id)")
            }
            if let at = try db.fetchValue(Double.self, "SELECT revealedAt FROM signalReveal WHERE gameId = ? AND n = ? AND playerId = ?",
                                          id, n, playerId) {
                return SignalReveal(round: n, signalTime: delay, revealedAt: Date(timeIntervalSince1970: at))
            }
            guard game.state == .open else {
                throw LobbyError(.conflict, .gameNotOpen, "Game \(id) is \(game.state.rawValue), not open: its rounds are played only while it is.")
            }
            try db.execute("INSERT INTO signalReveal (gameId, n, playerId, revealedAt) VALUES (?, ?, ?, ?)",
                           id, n, playerId, context.now.unixTime)
            // As stored, so every later answer is the same to the bit.
            return SignalReveal(round: n, signalTime: delay, revealedAt: Date(timeIntervalSince1970: context.now.unixTime))
        }
    }

    /// ``revealSignal(_:game:round:)`` for round `n` of the player's entry in tournament `id`.
    public func revealTournamentSignal(_ playerId: Int64, tournament id: Int64, round n: Int) async throws -> SignalReveal {
        try await write { context in
            let db = context.db
            // The tournament row first, as joins, scores and the closing take it: two reveals of one
            // round at once answer the same time (the second waits here, then reads the first's
            // revealedAt instead of writing its own over it), and a reveal racing the closing either
            // commits before it or finds the tournament closed.
            try db.lock("tournament", ids: [id])
            let summary = try self.tournamentSummary(db, id: id)
            guard let row = try db.fetchOne("""
                SELECT r.minigame, s.signalTime, s.revealedAt FROM tournamentScore s
                JOIN tournamentRound r ON r.tournamentId = s.tournamentId AND r.n = s.n
                WHERE s.tournamentId = ? AND s.playerId = ? AND s.n = ?
                """, id, playerId, n) else {
                throw LobbyError(.forbidden, .notEntered, "You have not joined tournament \(id), or it has no round \(n): join it before playing its rounds.")
            }
            guard let delay = try row.get(1, as: Double?.self) else {
                throw LobbyError.noSignal(round: n, minigame: try row.get(0, as: MinigameName.self), of: "tournament \(id)")
            }
            if let at = try row.get(2, as: Double?.self) {
                return SignalReveal(round: n, signalTime: delay, revealedAt: Date(timeIntervalSince1970: at))
            }
            guard summary.state == .open, summary.endsAt > context.now else { throw LobbyError.tournamentClosed(id) }
            try db.execute("UPDATE tournamentScore SET revealedAt = ? WHERE tournamentId = ? AND playerId = ? AND n = ?",
                           context.now.unixTime, id, playerId, n)
            // As stored, so every later answer is the same to the bit.
            return SignalReveal(round: n, signalTime: delay, revealedAt: Date(timeIntervalSince1970: context.now.unixTime))
        }
    }

    /// Refuses a Quickdraw claim above 0 whose signal the player never had revealed
    /// (`signalNotRevealed`): a reaction counts only to a signal shown. Checked before verifying,
    /// so a guessed signal is refused as such. Other games, and a claim of 0, pass.
    func checkRevealed(_ claimed: Int, terms: VerificationTerms, of what: String) throws {
        guard terms.round.minigame == .quickdraw, claimed > 0, terms.round.signalTime != nil, terms.revealedAt == nil else { return }
        logger.info("Score refused in round \(terms.round.n) of \(what): the signal was never revealed")
        throw LobbyError(.refused, .signalNotRevealed, """
            Round \(terms.round.n) of \(what) is a quickdraw whose signal you never asked for: its time is revealed when \
            the round starts (POST …/rounds/\(terms.round.n)/signal), and a reaction counts only to a signal revealed.
            """)
    }

    /// Holds a verified Quickdraw score to the lobby's clock: the time from the signal on the
    /// lobby's clock (the reveal plus the delay) to the submission must be at least the reaction
    /// the recording claims, less ``reactionClockTolerance`` (`reactionBeforeSignal`): a reaction
    /// cannot come after the score that reports it. Reactions faster than a person's (0.1 s)
    /// already score 0 (``Minigames/Quickdraw``). Other games, and a score of 0, pass.
    func checkReaction(_ score: GameScore, terms: VerificationTerms, of what: String) throws {
        guard terms.round.minigame == .quickdraw, score.score > 0, let signal = terms.round.signalTime,
              let revealedAt = terms.revealedAt else { return }
        let reaction = score.details["reaction_s"] ?? 0
        let elapsed = terms.now.timeIntervalSince(revealedAt) - signal
        guard elapsed >= reaction - Self.reactionClockTolerance else {
            let shown = (max(elapsed, -99) * 1000).rounded() / 1000
            logger.info("Score refused in round \(terms.round.n) of \(what): a reaction of \(reaction) s reported \(shown) s after the signal")
            throw LobbyError(.refused, .reactionBeforeSignal, """
                The recording reacts \(reaction) s after the signal, but on the lobby's clock the signal came only \(shown) s \
                before this score: play the round to its end on the signal revealed, then send the score.
                """)
        }
    }
}

extension LobbyError {
    static func noSignal(round n: Int, minigame: MinigameName, of what: String) -> LobbyError {
        LobbyError(.conflict, .noSignal, "Round \(n) of \(what) is \(minigame), which has no signal: play it on its plan.")
    }
}
