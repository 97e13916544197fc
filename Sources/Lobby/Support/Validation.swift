import Foundation

/// Field checks shared by registration and profile edits. Each throws an `invalidInput` error that
/// names the field and says what is expected.
enum Validation {
    static let usernameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

    static func username(_ value: String) throws -> String {
        guard (3...32).contains(value.count) else {
            throw LobbyError.invalid("username", "must be 3 to 32 characters long, got \(value.count).")
        }
        guard value.allSatisfy(usernameCharacters.contains) else {
            throw LobbyError.invalid("username", "may contain only letters, digits, '_', '.' and '-'.")
        }
        return value
    }

    static func name(_ value: String, field: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        // Characters as JSON Schema's maxLength and SQLite's length() count them: Unicode scalars,
        // so a letter with a skin-tone or accent modifier counts as two.
        guard (1...64).contains(trimmed.unicodeScalars.count) else {
            throw LobbyError.invalid(field, "must be 1 to 64 characters long, got \(trimmed.unicodeScalars.count).")
        }
        // C0 and C1 controls (the OpenAPI document states this as a pattern).
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw LobbyError.invalid(field, "must not contain control characters.")
        }
        if let problem = NameRules.problem(in: trimmed) { throw LobbyError.invalid(field, problem) }
        return trimmed
    }

    static func email(_ value: String) throws -> String {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard value.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !value.contains(where: { $0.isWhitespace })
        else {
            throw LobbyError.invalid("email", "\"\(value.prefix(80))\" is not an e-mail address like name@example.org.")
        }
        return value.lowercased()
    }

    /// An idempotency key: 1 to 128 characters counted as the document and the database count them
    /// (Unicode scalars), and no NUL, which SQLite's length() stops at and PostgreSQL's text cannot
    /// hold (a key of one NUL failed the database's check, a 500).
    static func isIdempotencyKey(_ key: String) -> Bool {
        (1...128).contains(key.unicodeScalars.count) && !key.unicodeScalars.contains("\0")
    }

    /// Bcrypt reads at most 72 bytes, so longer passwords are refused rather than silently cut.
    /// The length is counted in Unicode scalars, as the document's minLength counts it: 10 letters
    /// with a combining accent each are 20 characters there.
    static func password(_ value: String) throws -> String {
        guard value.unicodeScalars.count >= 10 else {
            throw LobbyError.invalid("password", "must be at least 10 characters long.")
        }
        guard value.utf8.count <= 72 else {
            throw LobbyError.invalid("password", "must be at most 72 bytes long.")
        }
        return value
    }
}
