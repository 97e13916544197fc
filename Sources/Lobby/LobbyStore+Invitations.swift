import Foundation
import LobbyDatabase
import SystemSupport

extension LobbyStore {
    /// Largest number of players one invitation may name.
    public static let maximumInviteesPerInvitation = 20

    /// Invites players to a new game. Invitees who cannot be invited are left out and listed with
    /// the reason; when nobody is left the whole invitation is refused. The inviter's own limit of
    /// open games refuses the invitation outright.
    public func invite(_ inviter: Int64, usernames: [String]) async throws -> Invitation {
        try await invite(inviter, usernames: usernames, key: nil).invitation
    }

    /// Invites as ``invite(_:usernames:)`` does. With a `key` (the agent's outbox sends one), a
    /// request repeating an earlier one of this inviter with the same key creates nothing and is
    /// answered with that invitation as it is now (and the players the first answer left out),
    /// for ``LobbyConfiguration/requestKeyLifetime``.
    public func invite(_ inviter: Int64, usernames: [String], key: String?) async throws -> InvitationReceipt {
        if let key, !Validation.isIdempotencyKey(key) { throw LobbyError.invalidKey(key) }
        var seen = Set<String>()
        let requested = usernames.filter { seen.insert($0.lowercased()).inserted }
        guard (1...Self.maximumInviteesPerInvitation).contains(requested.count) else {
            throw LobbyError.invalid("invitees", "name 1 to \(Self.maximumInviteesPerInvitation) players, got \(requested.count).")
        }
        let configuration = configuration
        return try await write { context in
            let db = context.db
            // Requests running at once must not take the inviter past its open games, a player
            // past the invitations it may hold or into a second game with the same player, nor
            // create two games for one key: lock the inviter and everyone named (players by id)
            // before anything is checked, so such requests run one after the other.
            let named = try requested.compactMap { try Query.player(db, username: $0)?.id }
            try db.lock("player", ids: [inviter] + named)
            try self.expireInvitations(&context)
            if let key, let first = try db.fetchOne("""
                SELECT gameId, excluded FROM invitationKey WHERE inviterId = ? AND key = ?
                """, inviter, key) {
                var invitation = try self.invitationView(db, gameId: first.get(0, as: Int64.self))
                invitation.excluded = try JSONDecoder().decode([ExcludedInvitee].self, from: Data(first.get(1, as: String.self).utf8))
                return InvitationReceipt(invitation: invitation, created: false)
            }
            let openGames = try self.openGameCount(db, playerId: inviter)
            guard openGames < configuration.maximumOpenGames else {
                throw LobbyError(.conflict, .openGameLimitReached,
                    "You already take part in \(openGames) open games, the maximum: finish one before inviting again.")
            }
            // A new account is held to stricter rules (``exclusionReason``): the time before which
            // accounts are established, or nil when the inviter's is.
            let newSince = context.now.addingTimeInterval(-configuration.newAccountAge).unixTime
            let inviterIsNew = try db.fetchValue(Bool.self, "SELECT createdAt > ? FROM player WHERE id = ?", newSince, inviter) ?? true
            var invitees: [PlayerRecord] = []
            var excluded: [ExcludedInvitee] = []
            for username in requested {
                if let reason = try self.exclusionReason(&context, inviter: inviter, newAccountsSince: inviterIsNew ? newSince : nil,
                                                         username: username, into: &invitees) {
                    excluded.append(ExcludedInvitee(username: username, reason: reason))
                }
            }
            guard !invitees.isEmpty else {
                let reasons = excluded.map { "\($0.username) (\($0.reason.rawValue))" }.joined(separator: ", ")
                throw LobbyError(.conflict, .nobodyInvitable, "Nobody could be invited: \(reasons).", excluded: excluded)
            }
            var game = GameRecord(
                id: nil, inviterId: inviter, state: .pending, createdAt: context.now,
                expiresAt: context.now.addingTimeInterval(configuration.invitationLifetime))
            try game.insertNumbered(db)
            let gameId = game.id!
            try MembershipRecord(gameId: gameId, playerId: inviter, role: .inviter, response: .accepted, respondedAt: context.now).insert(db)
            for invitee in invitees {
                try MembershipRecord(gameId: gameId, playerId: invitee.id!, role: .invitee, response: .pending).insert(db)
            }
            try self.drawRounds(db, gameId: gameId)
            let inviterName = try self.names(db, [inviter])[inviter]
            for invitee in invitees {
                try context.record(.invitationReceived, for: invitee.id!, EventData(game: gameId, player: inviterName))
            }
            if let key {
                var json = JSONWriter()
                json.array(excluded)
                try db.execute("""
                    INSERT INTO invitationKey (inviterId, key, gameId, excluded, createdAt) VALUES (?, ?, ?, ?, ?)
                    """, inviter, key, gameId, String(decoding: json.bytes, as: UTF8.self), context.now.unixTime)
            }
            var invitation = try self.invitationView(db, gameId: gameId)
            invitation.excluded = excluded
            return InvitationReceipt(invitation: invitation, created: true)
        }
    }

    /// Accepts an invitation; refused when the invitee already takes part in the maximum of open
    /// games. Accepting again is answered with the invitation (declining after accepting is refused).
    public func accept(_ invitee: Int64, invitation id: Int64) async throws -> Invitation {
        try await answer(invitee, invitation: id, with: .accepted)
    }

    /// Declines an invitation; the inviter cannot invite this player again during the cooldown.
    /// Declining again is answered with the invitation (accepting after declining is refused).
    public func decline(_ invitee: Int64, invitation id: Int64) async throws -> Invitation {
        try await answer(invitee, invitation: id, with: .declined)
    }

    /// Pending invitations the player sent or received.
    public func invitations(_ playerId: Int64) async throws -> [Invitation] {
        try await write { context in
            try self.expireInvitations(&context)
            let ids = try context.db.fetchAll("""
                SELECT g.id FROM membership m JOIN game g ON g.id = m.gameId
                WHERE m.playerId = ? AND g.state = \(GameState.pending.sqlLiteral) ORDER BY g.id
                """, playerId).map { try $0.get(0, as: Int64.self) }
            return try ids.map { try self.invitationView(context.db, gameId: $0) }
        }
    }

    /// Ends every pending invitation past its expiry: unanswered invitees are marked expired and
    /// the game opens with whoever accepted, or is cancelled.
    public func expireInvitations() async throws {
        try await write { context in try self.expireInvitations(&context) }
    }

    func expireInvitations(_ context: inout WriteContext) throws {
        let db = context.db
        let expired = try db.fetchAll("""
            SELECT id FROM game WHERE state = \(GameState.pending.sqlLiteral) AND expiresAt <= ? ORDER BY expiresAt, id
            """, context.now.unixTime).map { try $0.get(0, as: Int64.self) }
        for gameId in expired {
            // Every request expires what is due first, so several may find this game at once:
            // lock it and go on only if it is still pending, so that it expires once.
            try db.lock("game", ids: [gameId])
            guard try Query.game(db, id: gameId)?.state == .pending else { continue }
            let unanswered = try db.fetchAll("""
                SELECT playerId FROM membership WHERE gameId = ? AND response = \(InvitationResponse.pending.sqlLiteral) ORDER BY playerId
                """, gameId).map { try $0.get(0, as: Int64.self) }
            try db.execute("""
                UPDATE membership SET response = \(InvitationResponse.expired.sqlLiteral), respondedAt = ? WHERE gameId = ? AND response = \(InvitationResponse.pending.sqlLiteral)
                """, context.now.unixTime, gameId)
            for player in unanswered { try context.record(.invitationExpired, for: player, EventData(game: gameId)) }
            try settle(&context, gameId: gameId)
        }
    }

    private func answer(_ invitee: Int64, invitation id: Int64, with response: InvitationResponse) async throws -> Invitation {
        let maximumOpenGames = configuration.maximumOpenGames
        return try await write { context in
            let db = context.db
            // Many acceptances at once must not take the invitee past its open games: lock it
            // first, so that each one counts the games the ones before it accepted.
            try db.lock("player", ids: [invitee])
            try self.expireInvitations(&context)
            // Two invitees answering at once would each miss the other's answer, and neither
            // would open the game: lock the game, after the player, and read it once locked.
            try db.lock("game", ids: [id])
            guard let game = try Query.game(db, id: id) else { throw LobbyError.gameNotFound(id) }
            // An invitation to others does not exist for this player (nor tells that it exists);
            // its inviter knows it does, and is told why it cannot answer.
            guard let membership = try Query.membership(db, game: id, player: invitee) else {
                throw LobbyError.gameNotFound(id)
            }
            guard membership.role == .invitee else {
                throw LobbyError(.forbidden, .notInvited, "You sent invitation \(id): only the players invited answer it.")
            }
            // The same answer again (a retry whose first answer was lost) is answered, not refused.
            if membership.response == response { return try self.invitationView(db, gameId: id) }
            guard membership.response == .pending, game.state == .pending else {
                let why = membership.response == .expired ? "expired" : "was already answered"
                throw LobbyError(.conflict, .invitationClosed, "The invitation to game \(id) \(why).")
            }
            if response == .accepted {
                let openGames = try self.openGameCount(db, playerId: invitee)
                guard openGames < maximumOpenGames else {
                    throw LobbyError(.conflict, .openGameLimitReached,
                        "You already take part in \(openGames) open games, the maximum: finish one before accepting.")
                }
            }
            try db.execute("UPDATE membership SET response = ?, respondedAt = ? WHERE gameId = ? AND playerId = ?",
                           response, context.now.unixTime, id, invitee)
            let name = try self.names(db, [invitee])[invitee]
            try context.record(.invitationAnswered, for: game.inviterId, EventData(game: id, player: name, response: response))
            try self.settle(&context, gameId: id)
            return try self.invitationView(db, gameId: id)
        }
    }

    /// Once nobody's answer is pending, opens the game with everyone who accepted, or cancels it.
    /// The caller holds the game's lock.
    func settle(_ context: inout WriteContext, gameId: Int64) throws {
        let db = context.db
        guard let game = try Query.game(db, id: gameId), game.state == .pending else { return }
        let members = try Query.memberships(db, game: gameId)
        guard !members.contains(where: { $0.response == .pending }) else { return }
        let participants = members.filter { $0.response == .accepted }.map { $0.playerId }
        if participants.count >= 2 {
            try db.execute("UPDATE game SET state = \(GameState.open.sqlLiteral), openedAt = ? WHERE id = ?", context.now.unixTime, gameId)
            let ordered = [game.inviterId].filter(participants.contains) + participants.filter { $0 != game.inviterId }
            let names = try names(db, ordered)
            let rounds = try Query.rounds(db, game: gameId).map {
                PlannedRound(n: $0.n, game: $0.minigame, duration: $0.duration, signalTime: $0.signalTime)
            }
            let started = EventData(game: gameId, participants: ordered.map { names[$0] ?? "" }, rounds: rounds)
            for player in participants { try context.record(.gameStarted, for: player, started) }
        } else {
            try db.execute("UPDATE game SET state = \(GameState.cancelled.sqlLiteral), finishedAt = ? WHERE id = ?", context.now.unixTime, gameId)
            for member in members where member.response != .declined {
                try context.record(.gameCancelled, for: member.playerId, EventData(game: gameId))
            }
        }
    }

    /// Pending or open games the player takes part in (as inviter or accepted invitee).
    func openGameCount(_ db: any SQLSession, playerId: Int64) throws -> Int {
        try db.fetchValue(Int.self, """
            SELECT COUNT(*) FROM membership m JOIN game g ON g.id = m.gameId
            WHERE m.playerId = ? AND m.response = \(InvitationResponse.accepted.sqlLiteral) AND g.state IN \([GameState.pending, GameState.open].sqlList)
            """, playerId) ?? 0
    }

    /// Why `username` cannot be invited by `inviter` now, or nil after appending it to `invitees`.
    /// `newAccountsSince`: when the inviter's account is new, the time (seconds since 1970) after
    /// which accounts are new; nil when it is established.
    private func exclusionReason(
        _ context: inout WriteContext, inviter: Int64, newAccountsSince newSince: Double?, username: String,
        into invitees: inout [PlayerRecord]
    ) throws -> ExcludedInvitee.Reason? {
        let db = context.db
        guard let target = try Query.player(db, username: username) else { return .unknownPlayer }
        let targetId = target.id!
        if targetId == inviter { return .yourself }
        // A block by the invitee looks like the invitee does not exist; the inviter's own block is
        // named, since the inviter knows of it.
        if try hasBlocked(db, blocker: targetId, blocked: inviter) { return .unknownPlayer }
        if try hasBlocked(db, blocker: inviter, blocked: targetId) { return .blocked }
        if try !canInteract(db, viewer: inviter, with: targetId, now: context.now) { return .notNearby }
        // A new account may invite only a player it met both ways: its own report alone could be
        // made up, the invitee's agent hearing it cannot (from afar).
        if newSince != nil {
            let metBothWays = try db.fetchValue(Bool.self, """
                SELECT EXISTS (SELECT 1 FROM encounter WHERE observerId = ?1 AND seenId = ?2 AND lastSeenAt >= ?3)
                    AND EXISTS (SELECT 1 FROM encounter WHERE observerId = ?2 AND seenId = ?1 AND lastSeenAt >= ?3)
                """, inviter, targetId, context.now.addingTimeInterval(-configuration.encounterWindow).unixTime) ?? false
            if !metBothWays { return .notNearby }
        }
        // Every pair in the new game must be free: the inviter and this player, and this player and
        // each invitee already taken, since a group game pairs invitees too.
        for other in [inviter] + invitees.map({ $0.id! }) where try shareAGame(db, other, targetId) {
            return .openGameExists
        }
        let declinedRecently = try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM game g JOIN membership m ON m.gameId = g.id
                WHERE g.inviterId = ? AND m.playerId = ? AND m.response = \(InvitationResponse.declined.sqlLiteral) AND m.respondedAt > ?)
            """, inviter, targetId, context.now.addingTimeInterval(-configuration.declineCooldown).unixTime) ?? false
        if declinedRecently { return .declinedRecently }
        // Slots are counted per pair (one pending or open game, above) and the invitee's
        // ``LobbyConfiguration/maximumOpenInvitations`` holds only new accounts' invitations:
        // throw-away accounts can fill those, never the ones established players invite into.
        if let newSince {
            let openInvitations = try db.fetchValue(Int.self, """
                SELECT COUNT(*) FROM membership m JOIN game g ON g.id = m.gameId JOIN player p ON p.id = g.inviterId
                WHERE m.playerId = ? AND m.response = \(InvitationResponse.pending.sqlLiteral) AND g.state = \(GameState.pending.sqlLiteral) AND p.createdAt > ?
                """, targetId, newSince) ?? 0
            if openInvitations >= configuration.maximumOpenInvitations { return .invitationLimitReached }
        }
        invitees.append(target)
        return nil
    }

    /// Whether two players are both in a pending or open game (as inviter, or as invitee who has not
    /// declined).
    func shareAGame(_ db: any SQLSession, _ a: Int64, _ b: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM membership a JOIN membership b ON b.gameId = a.gameId JOIN game g ON g.id = a.gameId
                WHERE a.playerId = ? AND b.playerId = ? AND a.response IN \([InvitationResponse.pending, InvitationResponse.accepted].sqlList)
                AND b.response IN \([InvitationResponse.pending, InvitationResponse.accepted].sqlList) AND g.state IN \([GameState.pending, GameState.open].sqlList))
            """, a, b) ?? false
    }

    func invitationView(_ db: any SQLSession, gameId: Int64) throws -> Invitation {
        guard let game = try Query.game(db, id: gameId) else { throw LobbyError.gameNotFound(gameId) }
        let members = try Query.memberships(db, game: gameId)
        let names = try names(db, members.map { $0.playerId })
        return Invitation(
            id: gameId, inviter: names[game.inviterId] ?? "",
            invitees: members.filter { $0.role == .invitee }.map { .init(username: names[$0.playerId] ?? "", response: $0.response) },
            excluded: [], state: game.state, createdAt: game.createdAt, expiresAt: game.expiresAt)
    }
}
