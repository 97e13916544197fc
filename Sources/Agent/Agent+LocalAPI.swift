import Foundation
import LobbyClient

/// What `nearplay status` shows.
public struct AgentStatus: Codable, Sendable, Equatable {
    public var username: String
    public var beacon: String
    public var radio: String
    public var lobby: String
    /// Operations waiting in the outgoing queue.
    public var queued: Int
    /// The last lobby event handled.
    public var eventCursor: Int64
    /// The distance model ranging uses now, e.g. `log-distance(n=2.8)`.
    public var distanceModel: String?
    /// The location whose site profile that model comes from, when one is in range.
    public var rangingSite: String?

    public init(username: String, beacon: String, radio: String, lobby: String, queued: Int, eventCursor: Int64,
                distanceModel: String? = nil, rangingSite: String? = nil) {
        self.username = username
        self.beacon = beacon
        self.radio = radio
        self.lobby = lobby
        self.queued = queued
        self.eventCursor = eventCursor
        self.distanceModel = distanceModel
        self.rangingSite = rangingSite
    }
}

/// What `invite`, `accept`, `decline` and `block` answer while the lobby is away.
public struct QueuedOperation: Codable, Sendable, Equatable {
    public var queued: Bool
    public var key: String
    public var operation: String
}

extension Agent {
    /// How long a verb that goes through the queue waits for the lobby's answer before saying
    /// "queued".
    static let answerWait: Duration = .seconds(5)

    /// Answers one local API request.
    public func answer(_ request: AgentRequest) async -> AgentResponse {
        do {
            switch request {
            case .status:
                return .encoding(AgentStatus(username: identity.username, beacon: identity.beacon.description, radio: radio.description,
                                             lobby: lobby.baseURL, queued: await outbox.count, eventCursor: await follower.lastCursor,
                                             distanceModel: siteRanging.distanceModel.model.description, rangingSite: siteRanging.site?.name))
            case .metrics:
                return .encoding(await metricsText())
            case .nearby:
                var players = await nearby.players()
                if let unlocked = try? await lobby.unlocked() {
                    let names = Set(unlocked.map(\.username))
                    for index in players.indices { players[index].unlocked = names.contains(players[index].username) }
                }
                return .encoding(players)
            case .invite(let players):
                return try await queued(.invite(players))
            case .accept(let id):
                return try await queued(.answer(invitation: id, accept: true))
            case .decline(let id):
                return try await queued(.answer(invitation: id, accept: false))
            case .block(let player):
                let response = try await queued(.block(player))
                await resolver.forget(username: player)
                await nearby.forget(username: player)
                return response
            case .play(let game):
                return .encoding(try await session.playNext(game: game))
            case .invitations:
                return .encoding(try await fromLobby { try await $0.invitations() })
            case .games:
                return .encoding(try await fromLobby { try await $0.games() })
            case .stats(let player):
                return .encoding(try await fromLobby { try await $0.statistics(of: player) })
            case .unlocked:
                return .encoding(try await fromLobby { try await $0.unlocked() })
            case .leaderboard(let board, let date, let offset, let limit):
                return .encoding(try await fromLobby { try await $0.leaderboard(board, date: date, offset: offset, limit: limit) })
            case .achievements:
                return .encoding(try await fromLobby { try await $0.achievements() })
            case .locations:
                return .encoding(await locations.locations())
            case .tournaments(let location):
                return .encoding(try await tournaments(at: location))
            case .join(let tournament):
                // The lobby admits players it knows to be at the location: tell it now which
                // locations are in range, rather than wait for the next encounter report.
                let here = await locations.encounterSightings()
                if !here.isEmpty { _ = try? await lobby.reportEncounters(here) }
                return .encoding(try await session.joinAndPlay(tournament: tournament))
            case .events:
                return .failure(AgentError("events is a stream; the server handles it apart.", code: "badRequest"))
            }
        } catch let error as AgentError {
            return .failure(error)
        } catch {
            return .failure(AgentError("\(error)", code: "failed"))
        }
    }

    /// Queues `operation`, waits a little for the lobby's answer and passes it on; says
    /// "queued" when the lobby is away (it will be sent when it is back).
    private func queued(_ operation: OutgoingOperation) async throws(AgentError) -> AgentResponse {
        let key = try await outbox.enqueue(operation)
        switch await outbox.outcome(of: key, timeout: Self.answerWait) {
        case .sent(let data)?:
            return .result(data)
        case .refused(let code, let message)?:
            return .failure(AgentError(message, code: code))
        case nil:
            return .encoding(QueuedOperation(queued: true, key: key, operation: operation.summary))
        }
    }

    /// The locations in range (or the one named), with their tournaments as the lobby lists them now.
    private func tournaments(at location: Int64?) async throws(AgentError) -> [NearbyLocation] {
        var found = await locations.locations()
        if let location {
            let fresh = try await fromLobby { try await $0.location(location) }
            await locations.update(fresh)
            if let index = found.firstIndex(where: { $0.id == location }) {
                found[index].tournaments = fresh.tournaments
                return [found[index]]
            }
            return [NearbyLocation(id: fresh.id, name: fresh.name, beacon: fresh.beacon.beaconIdentity?.description ?? "", distance: nil,
                                   zone: "unknown", lastSeen: Date(timeIntervalSince1970: 0), tournaments: fresh.tournaments)]
        }
        for index in found.indices {
            let id = found[index].id
            let fresh = try await fromLobby { try await $0.location(id) }
            await locations.update(fresh)
            found[index].tournaments = fresh.tournaments
        }
        return found
    }

    /// A read straight from the lobby; when it is away the error says so.
    private func fromLobby<T: Sendable>(_ read: @Sendable (LobbyClient) async throws -> T) async throws(AgentError) -> T {
        do {
            return try await read(lobby)
        } catch let error as LobbyClientError {
            throw AgentError(error.message, code: error.code.rawValue)
        } catch {
            throw AgentError("The lobby at \(lobby.baseURL) cannot be reached (\(error)); try again when it is back.", code: "lobbyUnreachable")
        }
    }
}
