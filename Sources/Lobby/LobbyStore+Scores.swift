import Foundation
import GRDB  // for the GRDB callers' overload at the bottom only
import LobbyDatabase
import Minigames
import SensorSamples
import SystemSupport

extension LobbyStore {
    /// Records the player's score for round `n`, once the lobby has verified it on the round's
    /// recording. Submitting again with the same key is answered as the first time (not an error,
    /// and without verifying again); with another key it is refused. When the last score of the
    /// last round arrives, the game is evaluated and its rewards applied in the same transaction.
    ///
    /// The recording is verified on the lobby's terms, not the client's: its calibration is
    /// replaced by the one the player stored (``setCalibration(_:_:)``), or by an empty one (each
    /// game's uncalibrated defaults) when none is stored; its duration and signal time by the
    /// round's plan. Its game must be the round's minigame. Then ``ScoreVerifier`` checks that real
    /// sensors could have produced it and that it gives exactly the claimed score, and a Quickdraw
    /// reaction is held to the lobby's clock (``checkReaction(_:terms:of:)``). A refusal is a
    /// `refused` error whose message says why. The recording is kept, as verified, with the score,
    /// and the score joins the player's history that ``ScoreScrutiny`` judges.
    public func submitScore(
        _ playerId: Int64, game id: Int64, round n: Int, score: Int, key: String, recording: RoundRecording
    ) async throws -> ScoreReceipt {
        try Self.checkSubmission(score: score, key: key)
        // What to verify against, read without holding the writer: verification is CPU work.
        let check = try await read { db, now in try self.checkScore(db, playerId, game: id, round: n, score: score, key: key, now: now) }
        let terms: VerificationTerms
        switch check {
        case .repeated(let receipt): return receipt
        case .open(let open): terms = open
        }
        let verified = try verify(score, recording, terms, of: "game \(id)")
        let json = String(decoding: JSONWriter.encode(verified.recording), as: UTF8.self)
        return try await write { context in
            let db = context.db
            // A retry of this request, or the game's other last scores, may be submitted at the
            // same time: lock the game's players, then the game, so that the check below sees
            // every score committed before it, each round takes one score per player, and the
            // game is finished and rewarded once.
            try self.lockGames(db, [id])
            // Checked again inside the transaction: a retry may have raced this request.
            if case .repeated(let receipt) = try self.checkScore(db, playerId, game: id, round: n, score: score, key: key, now: context.now) {
                return receipt
            }
            try ScoreRecord(gameId: id, n: n, playerId: playerId, score: verified.score, key: key, submittedAt: context.now).insert(db)
            try db.execute("INSERT INTO recording (gameId, n, playerId, json) VALUES (?, ?, ?, ?)", id, n, playerId, json)
            try self.recordEvidence(&context, player: playerId, minigame: terms.round.minigame, score: verified.score,
                                    unfingerprinted: verified.unfingerprinted)
            try self.closeRoundsAndGame(&context, gameId: id, scoredRounds: [n])
            var game = try self.gameView(db, gameId: id)
            game.achievements = try self.grants(db, player: playerId, gameId: id, round: n, at: context.now)
            return ScoreReceipt(game: game, created: true)
        }
    }

    /// The recording a stored score was verified on (calibration and plan as the lobby set them).
    public func recording(_ playerId: Int64, game id: Int64, round n: Int) async throws -> RoundRecording? {
        let json = try await read { db, _ in
            try db.fetchValue(String.self, "SELECT json FROM recording WHERE gameId = ? AND n = ? AND playerId = ?", id, n, playerId)
        }
        return try json.map { try JSONDecoder().decode(RoundRecording.self, from: Data($0.utf8)) }
    }

    private enum ScoreCheck: Sendable {
        /// The same key and score were already recorded: answer as the first time.
        case repeated(ScoreReceipt)
        /// A score may be recorded in this round, once verified on these terms.
        case open(VerificationTerms)
    }

    private func checkScore(_ db: any SQLSession, _ playerId: Int64, game id: Int64, round n: Int, score: Int, key: String, now: Date) throws -> ScoreCheck {
        guard let game = try Query.game(db, id: id) else { throw LobbyError.gameNotFound(id) }
        guard let membership = try Query.membership(db, game: id, player: playerId) else {
            // Another players' game does not exist for this one.
            throw LobbyError.gameNotFound(id)
        }
        guard membership.response == .accepted else {
            throw LobbyError(.forbidden, .notYourGame, "You did not accept game \(id), so you cannot score in it.")
        }
        if let existing = try Query.score(db, game: id, round: n, player: playerId) {
            guard existing.key == key, existing.score == score else {
                throw LobbyError(.conflict, .scoreAlreadySubmitted,
                    "You already submitted a score for round \(n) of game \(id); a round is played once.")
            }
            var game = try gameView(db, gameId: id)
            game.achievements = try grants(db, player: playerId, gameId: id, round: n, at: existing.submittedAt)
            return .repeated(ScoreReceipt(game: game, created: false))
        }
        guard game.state == .open else {
            throw LobbyError(.conflict, .gameNotOpen, "Game \(id) is \(game.state.rawValue), not open: scores are taken only while it is played.")
        }
        guard var round = try Query.round(db, game: id, n: n) else {
            throw LobbyError(.notFound, .roundNotFound, "Game \(id) has no round \(n).")
        }
        // The signal the plan does not show, and when this player had it revealed.
        round.signalTime = round.signalDelay
        let revealedAt = try db.fetchValue(Double.self, "SELECT revealedAt FROM signalReveal WHERE gameId = ? AND n = ? AND playerId = ?",
                                           id, n, playerId)
        return .open(VerificationTerms(round: round, calibration: try storedCalibration(db, playerId: playerId),
                                       revealedAt: revealedAt.map(Date.init(timeIntervalSince1970:)), now: now))
    }

    /// Refuses a claimed score out of range or an idempotency key of the wrong length.
    static func checkSubmission(score: Int, key: String) throws {
        guard (0...maximumScore).contains(score) else {
            throw LobbyError.invalid("score", "must be 0…\(maximumScore), got \(score).")
        }
        guard Validation.isIdempotencyKey(key) else { throw LobbyError.invalidKey(key) }
    }

    /// The recording with the lobby's calibration and plan, the score it gives, and whether it has
    /// a sensor's fingerprint; a `refused` error when the claim does not stand. `what` names the
    /// game or tournament in messages.
    func verify(_ claimed: Int, _ recording: RoundRecording, _ terms: VerificationTerms, of what: String) throws -> VerifiedScore {
        let round = terms.round, calibration = terms.calibration
        try checkRevealed(claimed, terms: terms, of: what)
        guard recording.game == round.minigame else {
            throw LobbyError(.refused, .scoreRefused,
                "The recording is of \(recording.game.rawValue.debugDescription), but round \(round.n) of \(what) is \(round.minigame).")
        }
        var verified = recording
        verified.calibration = calibration ?? SensorCalibration()
        verified.duration = round.duration
        verified.signalTime = round.signalTime
        let score: GameScore
        do {
            score = try ScoreVerifier().verify(claimedScore: claimed, recording: verified)
        } catch {
            let reason = String(describing: error)
            logger.info("Score refused in round \(round.n) of \(what): \(reason)")
            throw LobbyError(.refused, .scoreRefused, reason)
        }
        try checkReaction(score, terms: terms, of: what)
        return VerifiedScore(recording: verified, score: score.score, unfingerprinted: SensorFingerprint.missing(in: verified))
    }

    /// Recordings and calibrations as stored: the Minigames coding keys, sorted.
    static let recordingEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}

/// What a score is verified against, read before verifying (verification is CPU work, done
/// outside the writer).
struct VerificationTerms: Sendable {
    /// The round's plan, its `signalTime` the signal the lobby drew (hidden from plans).
    var round: RoundRecord
    /// The player's stored calibration, nil when it stored none.
    var calibration: SensorCalibration?
    /// When the lobby revealed the round's signal to this player; nil when it did not.
    var revealedAt: Date?
    /// The lobby's time when the submission was read.
    var now: Date
}

/// A score that stands: the recording as verified, its score, and why it lacks a sensor's
/// fingerprint (nil when it has one).
struct VerifiedScore: Sendable {
    var recording: RoundRecording
    var score: Int
    var unfingerprinted: String?
}

extension LobbyStore {
    /// Stores the calibration of the player's device, which the lobby then uses to verify its
    /// scores. Refused (`refused`, with the reason) when a device at rest does not report it
    /// (``Minigames/CalibrationBounds/restingDevice``); storing another one is allowed
    /// ``LobbyConfiguration/calibrationChangesPerDay`` times in 24 hours (`conflict`,
    /// `calibrationChangeLimit`, past that), so a player cannot try calibrations until one
    /// scores best. Storing the calibration already stored changes nothing and is not counted.
    @discardableResult
    public func setCalibration(_ playerId: Int64, _ calibration: SensorCalibration) async throws -> SensorCalibration {
        do {
            try CalibrationBounds.restingDevice.check(calibration)
        } catch {
            throw LobbyError(.refused, .calibrationRefused, String(describing: error))
        }
        let json = String(decoding: try Self.recordingEncoder.encode(calibration), as: UTF8.self)
        let limit = configuration.calibrationChangesPerDay
        try await write { context in
            let db = context.db
            // Changes sent at once must not pass the limit together: lock the player first, so
            // that each counts the changes before it.
            try db.lock("player", ids: [playerId])
            _ = try self.livePlayer(db, id: playerId)
            if try self.storedCalibration(db, playerId: playerId) == calibration { return }
            let since = context.now.addingTimeInterval(-24 * 3600).unixTime
            let changes = try db.fetchAll("SELECT at FROM calibrationChange WHERE playerId = ? AND at > ? ORDER BY at", playerId, since)
                .map { try $0.get(0, as: Double.self) }
            if changes.count >= limit, let oldest = changes.first {
                let next = Date(timeIntervalSince1970: oldest + 24 * 3600)
                throw LobbyError(.conflict, .calibrationChangeLimit, """
                    You changed your calibration \(changes.count) times in the last 24 hours, the most allowed: keep the one stored \
                    and try again after \(next.formatted(Date.ISO8601FormatStyle())).
                    """)
            }
            try db.execute("INSERT INTO calibrationChange (playerId, at) VALUES (?, ?)", playerId, context.now.unixTime)
            try db.execute("""
                INSERT INTO calibration (playerId, json, updatedAt) VALUES (?, ?, ?)
                ON CONFLICT (playerId) DO UPDATE SET json = excluded.json, updatedAt = excluded.updatedAt
                """, playerId, json, context.now.unixTime)
        }
        return calibration
    }

    /// The calibration the player stored; `notFound` when it stored none.
    public func calibration(_ playerId: Int64) async throws -> SensorCalibration {
        let stored = try await read { db, _ in try self.storedCalibration(db, playerId: playerId) }
        guard let stored else {
            throw LobbyError(.notFound, .calibrationNotFound,
                "No calibration is stored for your device: measure one with `nearplay calibrate sensors` and send it with PUT /v1/players/me/calibration.")
        }
        return stored
    }

    func storedCalibration(_ db: any SQLSession, playerId: Int64) throws -> SensorCalibration? {
        guard let json = try db.fetchValue(String.self, "SELECT json FROM calibration WHERE playerId = ?", playerId) else {
            return nil
        }
        return try JSONDecoder().decode(SensorCalibration.self, from: Data(json.utf8))
    }

    /// Forgets the idempotency keys of invitations and encounter reports older than
    /// ``LobbyConfiguration/requestKeyLifetime``.
    public func pruneRequestKeys() async throws {
        let lifetime = configuration.requestKeyLifetime
        try await write { context in
            let before = context.now.addingTimeInterval(-lifetime).unixTime
            try context.db.execute("DELETE FROM invitationKey WHERE createdAt < ?", before)
            try context.db.execute("DELETE FROM encounterReport WHERE createdAt < ?", before)
        }
    }

    /// Deletes events older than ``LobbyConfiguration/eventRetention`` (peer readings, which
    /// matter only while two players are near, after ``LobbyConfiguration/peerReadingRetention``),
    /// so the feed does not grow for ever. A client resuming from an older cursor gets what is left.
    public func pruneEvents() async throws {
        let retention = configuration.eventRetention
        let readings = configuration.peerReadingRetention
        try await write { context in
            try context.db.execute("DELETE FROM event WHERE at < ?", context.now.addingTimeInterval(-retention).unixTime)
            try context.db.execute("DELETE FROM event WHERE kind = ? AND at < ?",
                                   LobbyEvent.Kind.peerReading, context.now.addingTimeInterval(-readings).unixTime)
        }
    }
}
