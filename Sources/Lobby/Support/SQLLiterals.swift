import BeaconFrames
import LobbyDatabase
import Minigames

// The states, responses, roles and outcomes the schema stores are Swift raw-value types; a
// statement that names one as a constant (`WHERE state = 'open'`) writes it through `sqlLiteral`,
// so each stored word is spelled once, in its type. They stay literals rather than `?` arguments:
// the statements and so their query plans (partial indexes match constants only) are unchanged.

extension GameState: SQLValueConvertible {}
extension InvitationResponse: SQLValueConvertible {}
extension TournamentState: SQLValueConvertible {}
extension GameOutcome: SQLValueConvertible {}
extension LobbyEvent.Kind: SQLValueConvertible {}
/// Stored as its raw value, TEXT on both engines.
extension MinigameName: SQLValueConvertible {}
/// Stored as REAL dBm, as the number it was before it had a type.
extension MeasuredPower: SQLValueConvertible {}

extension SQLValueConvertible {
    /// The value as an SQL literal, quoted by ``LobbyDatabase/SQLValue``'s description (the one
    /// place that quotes), e.g. `'open'`.
    var sqlLiteral: String { sqlValue.description }
}

extension Sequence where Element: SQLValueConvertible {
    /// The values as a parenthesised list of literals for `IN`, e.g. `('pending', 'open')`.
    var sqlList: String { "(" + map(\.sqlLiteral).joined(separator: ", ") + ")" }
}
