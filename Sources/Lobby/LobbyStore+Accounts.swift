import BeaconKeys
import Crypto
import Foundation
import GRDB
import HummingbirdBcrypt
import LobbyDatabase

extension LobbyStore {
    /// Registers a player with the secret its rotating beacon identity is derived from
    /// (``beaconKey(_:)`` hands it to the player's agent), and a static identity (a random free
    /// major/minor pair, ``freeBeaconIdentity(_:)``, inside the insert's transaction, so two
    /// registrations never get the same one).
    public func register(_ registration: Registration) async throws -> Player {
        let username = try Validation.username(registration.username)
        let firstName = try Validation.name(registration.firstName, field: "firstName")
        let lastName = try Validation.name(registration.lastName, field: "lastName")
        let email = try Validation.email(registration.email)
        let password = try Validation.password(registration.password)
        let cost = configuration.bcryptCost
        let hash = try await offload { Bcrypt.hash(password, cost: cost) }
        // Its rotating identity's secret (``RotatingIdentity``); the static pair is what it
        // advertised before identities rotated, kept unique for the migration window.
        let secret = BeaconSecret.random()
        let skeleton = UsernameSkeleton.of(username)
        let (player, id) = try await write { context in
            let db = context.db
            // Two registrations of one username, or of two that look alike, would both pass the
            // checks below on PostgreSQL (no row exists yet to lock), so each takes a
            // transaction-scoped advisory lock on the username's skeleton first: look-alikes and
            // usernames differing only in case share it. SQLite's one writer needs none.
            if db.dialect == .postgres {
                try db.execute("SELECT pg_advisory_xact_lock(?)", PostgresDatabaseKeys.key("username-skeleton:" + skeleton))
            }
            if try db.fetchValue(Int.self, "SELECT COUNT(*) FROM player WHERE \(db.caseless("username"))", username) ?? 0 > 0 {
                throw LobbyError(.conflict, .usernameTaken, "The username \(username) is taken: choose another one.")
            }
            // One that looks like a player's (aIice beside alice), or like a player's deleted
            // within the reservation, would pass for that player.
            let reservedSince = context.now.addingTimeInterval(-self.configuration.usernameReservation).unixTime
            if try db.fetchValue(Bool.self, """
                SELECT EXISTS (SELECT 1 FROM player WHERE usernameSkeleton = ? AND (deletedAt IS NULL OR deletedAt > ?))
                """, skeleton, reservedSince) ?? false {
                throw LobbyError(.conflict, .usernameTaken,
                                 "The username \(username) is taken or looks like one that is (I, l and 1 or O and 0 read alike): choose another one.")
            }
            // E-mail addresses are not unique: refusing a taken one would tell anyone whether an
            // address has an account here. Players sign in with their username.
            guard let identity = try Self.freeBeaconIdentity(db) else {
                throw LobbyError(.conflict, .beaconsExhausted, "Every beacon identity of this deployment is taken.")
            }
            var record = PlayerRecord(
                id: nil, username: username, firstName: firstName, lastName: lastName, email: email,
                passwordHash: hash, beaconMajor: identity.major, beaconMinor: identity.minor, photoVersion: 0,
                createdAt: context.now, deletedAt: nil, usernameSkeleton: skeleton, activeAt: context.now,
                beaconSecret: Data(secret.bytes))
            try record.insertNumbered(db)
            try db.notify(WriteContext.identityChannel, "player:\(record.id!)")
            return (self.playerView(record), record.id!)
        }
        identities.add(.player, id, secret: secret)
        return player
    }

    /// A random identity no player holds: major 1…65535 (0 is the locations'), minor 0…65535.
    /// Identities handed out in sequence let anyone name every player without hearing one; at
    /// random, naming one unheard is a guess in four billion per player registered, and the
    /// lobby counts guesses (``LobbyConfiguration/identityGuessesPerHour``). Nil after 64 draws
    /// that were all taken (a deployment that full has far more players than an identity space
    /// of 2^32 serves well).
    static func freeBeaconIdentity(_ db: any SQLSession) throws -> (major: Int, minor: Int)? {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<64 {
            let major = Int.random(in: 1...65535, using: &generator), minor = Int.random(in: 0...65535, using: &generator)
            let taken = try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM player WHERE beaconMajor = ? AND beaconMinor = ?)",
                                          major, minor) ?? true
            if !taken { return (major, minor) }
        }
        return nil
    }

    /// Checks a username and password and opens a session.
    public func logIn(username: String, password: String) async throws -> SessionToken {
        let record = try await read { db, _ in
            try Query.player(db, username: username)
        }
        guard let record, let hash = record.passwordHash else {
            // An unknown username costs what a wrong password costs, so timing does not tell
            // which usernames exist.
            let dummy = await dummyPasswordHash.value
            _ = try await offload { Bcrypt.verify(password, hash: dummy) }
            throw LobbyError.badCredentials
        }
        guard try await offload({ Bcrypt.verify(password, hash: hash) }) else { throw LobbyError.badCredentials }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = generator.next() }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let lifetime = configuration.sessionLifetime
        // A player registered before identities rotated gets its secret at its next sign-in.
        if record.beaconSecret == nil { _ = try await beaconKey(record.id!) }
        return try await write { context in
            let expiresAt = context.now.addingTimeInterval(lifetime)
            var session = SessionRecord(
                id: nil, playerId: record.id!, tokenHash: Self.tokenHash(token), createdAt: context.now,
                expiresAt: expiresAt)
            try session.insertNumbered(context.db)
            self.noteActive(record.id!)
            return SessionToken(token: token, expiresAt: expiresAt)
        }
    }

    /// The id of the player a bearer token belongs to, if the token is known and unexpired.
    public func authenticate(token: String) async throws -> Int64 {
        let hash = Self.tokenHash(token)
        if let id = sessions.player(for: hash, at: clock.now()) {
            noteActive(id)
            return id
        }
        let session = try await read { db, now -> (id: Int64, expiresAt: Date)? in
            try db.fetchOne("SELECT playerId, expiresAt FROM session WHERE tokenHash = ? AND expiresAt > ?", hash, now.unixTime)
                .map { (try $0.get(0, as: Int64.self), try $0.get(1, as: Date.self)) }
        }
        guard let session else { throw LobbyError.badToken }
        sessions.remember(hash, player: session.id, until: session.expiresAt)
        noteActive(session.id)
        return session.id
    }

    /// Ends the session of `token`.
    public func logOut(token: String) async throws {
        let hash = Self.tokenHash(token)
        try await write { context in
            try context.db.execute("DELETE FROM session WHERE tokenHash = ?", hash)
            try context.db.notify(WriteContext.sessionChannel, "token:" + hash.base64EncodedString())
        }
        sessions.forget(hash)
    }

    /// The player's own view of itself.
    public func player(_ playerId: Int64) async throws -> Player {
        try await read { db, _ in try self.playerView(self.livePlayer(db, id: playerId)) }
    }

    /// Changes names; username and e-mail never change, the password changes with
    /// ``changePassword(_:current:new:session:)``.
    public func updatePlayer(_ playerId: Int64, _ changes: PlayerChanges) async throws -> Player {
        let firstName = try changes.firstName.map { try Validation.name($0, field: "firstName") }
        let lastName = try changes.lastName.map { try Validation.name($0, field: "lastName") }
        return try await write { context in
            let db = context.db
            // The answer is the row as this change leaves it: a deletion or another change of
            // the player's must not slip in between the read and the update.
            try db.lock("player", ids: [playerId])
            var record = try self.livePlayer(db, id: playerId)
            if let firstName { record.firstName = firstName }
            if let lastName { record.lastName = lastName }
            try db.execute("UPDATE player SET firstName = ?, lastName = ? WHERE id = ?", record.firstName, record.lastName, playerId)
            return self.playerView(record)
        }
    }

    /// Replaces the password of the player signed in with `session` (its bearer token) after
    /// checking `current`, and ends every session of the player, this one included: a stolen
    /// token alone cannot take the account over, and of changes racing on one token only the
    /// first succeeds (the others find their session gone). Sign in again with the new password.
    public func changePassword(_ playerId: Int64, current: String, new: String, session token: String) async throws {
        let password = try Validation.password(new)
        let stored = try await read { db, _ in try self.livePlayer(db, id: playerId).passwordHash }
        guard let stored, try await offload({ Bcrypt.verify(current, hash: stored) }) else {
            throw LobbyError(.forbidden, .wrongCurrentPassword,
                             "currentPassword is not your password: send the one you sign in with now.")
        }
        let cost = configuration.bcryptCost
        let hash = try await offload { Bcrypt.hash(password, cost: cost) }
        let sessionHash = Self.tokenHash(token)
        try await write { context in
            let db = context.db
            // Of changes racing on one token only the first may succeed: each waits here for the
            // one before to commit, and then finds its session gone.
            try db.lock("player", ids: [playerId])
            guard try db.fetchValue(Int.self, "SELECT COUNT(*) FROM session WHERE tokenHash = ?", sessionHash) ?? 0 > 0 else {
                throw LobbyError.badToken
            }
            _ = try self.livePlayer(db, id: playerId)
            try db.execute("UPDATE player SET passwordHash = ? WHERE id = ?", hash, playerId)
            try db.execute("DELETE FROM session WHERE playerId = ?", playerId)
            try db.notify(WriteContext.sessionChannel, "player:\(playerId)")
        }
        // Cached sessions go with the ones deleted in the transaction.
        sessions.forget(player: playerId)
    }

    /// Replaces the profile photo. The bytes must be a JPEG or PNG file (checked by their signature)
    /// no larger than the configured maximum.
    public func setPhoto(_ playerId: Int64, bytes: Data) async throws -> Player {
        guard bytes.count <= configuration.maximumPhotoBytes else {
            throw LobbyError(.invalidInput, .photoTooLarge,
                "The photo is \(bytes.count) bytes; the limit is \(configuration.maximumPhotoBytes) bytes.")
        }
        guard let kind = ImageKind(sniffing: bytes) else {
            throw LobbyError(.invalidInput, .notAnImage,
                "The photo is neither a JPEG nor a PNG file (its first bytes are \(bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " "))).")
        }
        return try await write { context in
            let db = context.db
            // Two photos set at once must each move photoVersion on (its URL changes with it).
            try db.lock("player", ids: [playerId])
            var record = try self.livePlayer(db, id: playerId)
            try db.execute("""
                INSERT INTO photo (playerId, contentType, bytes) VALUES (?, ?, ?)
                ON CONFLICT (playerId) DO UPDATE SET contentType = excluded.contentType, bytes = excluded.bytes
                """, playerId, kind.rawValue, bytes)
            record.photoVersion += 1
            try db.execute("UPDATE player SET photoVersion = ? WHERE id = ?", record.photoVersion, playerId)
            return self.playerView(record)
        }
    }

    /// A player's photo and its content type, for the player itself and players who met it or
    /// unlocked it (and are not blocked either way).
    public func photo(viewer: Int64, username: String) async throws -> (contentType: String, bytes: Data) {
        try await read { db, _ in
            let target = try self.visiblePlayer(db, viewer: viewer, username: username)
            // A face is for those who met its owner (or unlocked them): a username alone does not
            // show it. To others it looks like no photo.
            guard try target.id! == viewer || self.hasMet(db, viewer, target.id!),
                  let photo = try PhotoRecord.fetchOne(db, "SELECT * FROM photo WHERE playerId = ?", target.id!)
            else {
                throw LobbyError(.notFound, .photoNotFound, "\(username) has no photo.")
            }
            return (photo.contentType, photo.bytes)
        }
    }

    /// Deletes an account by anonymising it: personal data, sessions, photo, encounters (and the
    /// crowd calibration's exchanges and offsets, and where its locations' beacons stood and what
    /// they heard), blocks and unlocks go; the row stays so games and rounds still point somewhere. Pending invitations it
    /// sent are cancelled, those it received are declined, and in open games its missing scores are
    /// recorded as 0 (a forfeit) so the others' game still ends.
    public func deletePlayer(_ playerId: Int64) async throws {
        try await write { context in
            let db = context.db
            // A deletion racing another (or a change of the player's) must find the player as the
            // other left it: the second deletion then finds no live player.
            try db.lock("player", ids: [playerId])
            _ = try self.livePlayer(db, id: playerId)
            // Its identities name no one any more (the tables skip deleted players): beaconSecret goes.
            try db.execute("""
                UPDATE player SET username = NULL, firstName = NULL, lastName = NULL, email = NULL, passwordHash = NULL,
                    photoVersion = 0, deletedAt = ?, beaconSecret = NULL
                WHERE id = ?
                """, context.now.unixTime, playerId)
            for statement in [
                "DELETE FROM session WHERE playerId = ?1",
                "DELETE FROM photo WHERE playerId = ?1",
                "DELETE FROM encounter WHERE observerId = ?1 OR seenId = ?1",
                "DELETE FROM block WHERE blockerId = ?1 OR blockedId = ?1",
                "DELETE FROM unlock WHERE ownerId = ?1 OR unlockedId = ?1",
                "DELETE FROM event WHERE playerId = ?1",
                "DELETE FROM calibration WHERE playerId = ?1",
                "DELETE FROM invitationKey WHERE inviterId = ?1",
                "DELETE FROM encounterReport WHERE reporterId = ?1",
                "DELETE FROM crowdExchange WHERE firstId = ?1 OR secondId = ?1",
                "DELETE FROM radioOffsets WHERE playerId = ?1",
                // Its locations stay (players' tournament history names them), but not where its
                // beacons stood, what they heard, or what the solve made of that.
                "DELETE FROM locationHearing WHERE listenerId IN (SELECT id FROM location WHERE ownerId = ?1) OR heardId IN (SELECT id FROM location WHERE ownerId = ?1)",
                "DELETE FROM locationExchange WHERE firstId IN (SELECT id FROM location WHERE ownerId = ?1) OR secondId IN (SELECT id FROM location WHERE ownerId = ?1)",
                "DELETE FROM crowdProfile WHERE source = 'beacons' AND locationId IN (SELECT id FROM location WHERE ownerId = ?1)",
                "UPDATE location SET positionSite = NULL, positionX = NULL, positionY = NULL, placedAt = NULL WHERE ownerId = ?1",
            ] {
                try db.execute(statement, playerId)
            }
            try self.forgetStanding(db, playerId: playerId)
            try self.withdraw(&context, playerId: playerId)
            try db.notify(WriteContext.sessionChannel, "player:\(playerId)")
        }
        sessions.forget(player: playerId)
    }

    /// Session tokens are stored as their SHA-256 digests, so a copy of the database opens no session.
    static func tokenHash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    func playerView(_ record: PlayerRecord) -> Player {
        Player(
            username: record.username ?? "", firstName: record.firstName ?? "", lastName: record.lastName ?? "",
            email: record.email ?? "",
            beacon: currentBeacon(record, at: clock.now()),
            photoURL: photoURL(record), createdAt: record.createdAt)
    }

    func photoURL(_ record: PlayerRecord) -> String? {
        guard record.photoVersion > 0, let username = record.username else { return nil }
        return "/v1/players/\(username)/photo?v=\(record.photoVersion)"
    }

    /// An existing, undeleted player by id.
    func livePlayer(_ db: any SQLSession, id: Int64) throws -> PlayerRecord {
        guard let record = try Query.player(db, id: id), record.deletedAt == nil else {
            throw LobbyError.badToken
        }
        return record
    }

    /// An existing, undeleted player by username.
    func livePlayer(_ db: any SQLSession, username: String) throws -> PlayerRecord {
        guard let record = try Query.player(db, username: username) else {
            throw LobbyError.playerNotFound(username)
        }
        return record
    }

    /// A player `viewer` may see: existing, and neither has blocked the other (a block hides both
    /// ways, and looks like the player does not exist).
    func visiblePlayer(_ db: any SQLSession, viewer: Int64, username: String) throws -> PlayerRecord {
        let target = try livePlayer(db, username: username)
        if try isBlocked(db, viewer, target.id!) { throw LobbyError.playerNotFound(username) }
        return target
    }

    /// Whether `blocker` has blocked `blocked` (one way).
    func hasBlocked(_ db: any SQLSession, blocker: Int64, blocked: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM block WHERE blockerId = ? AND blockedId = ?)", blocker, blocked) ?? false
    }

    func isBlocked(_ db: any SQLSession, _ a: Int64, _ b: Int64) throws -> Bool {
        try db.fetchValue(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM block WHERE (blockerId = ?1 AND blockedId = ?2) OR (blockerId = ?2 AND blockedId = ?1))
            """, a, b) ?? false
    }

    /// Display names for player ids; deleted players get their placeholder.
    func names(_ db: any SQLSession, _ ids: [Int64]) throws -> [Int64: String] {
        var names: [Int64: String] = [:]
        for id in Set(ids) {
            guard let row = try db.fetchOne("SELECT username FROM player WHERE id = ?", id) else { continue }
            names[id] = try row.get(0, as: String?.self) ?? DeletedPlayer.name(id: id)
        }
        return names
    }
}
