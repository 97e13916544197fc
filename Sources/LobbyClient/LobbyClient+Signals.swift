import Foundation
import LobbyAPI

/// Quickdraw's signal as the lobby reveals it when a round starts: seconds from the reveal to the
/// signal, and the lobby's time of the reveal.
public typealias RevealedSignal = Components.Schemas.SignalReveal

extension LobbyClient {
    /// Reveals Quickdraw's signal in round `n` of game `id`: call it as the round starts, then show
    /// the signal `signalTime` seconds later. The lobby holds the reaction to the time of the first
    /// reveal (status 409, code `noSignal`, for a round without a signal).
    public func revealSignal(game id: Int64, round n: Int) async throws -> RevealedSignal {
        try await call { try await $0.revealSignal(path: .init(id: id, n: n)).ok.body.json }
    }

    /// ``revealSignal(game:round:)`` for round `n` of the player's entry in tournament `id`.
    public func revealTournamentSignal(tournament id: Int64, round n: Int) async throws -> RevealedSignal {
        try await call { try await $0.revealTournamentSignal(path: .init(id: id, n: n)).ok.body.json }
    }
}
