import Foundation
import Minigames

extension LobbyClient {
    /// Registers the location `name` (or re-uses the caller's location of that name).
    public func registerLocation(name: String, timeZone: String? = nil) async throws -> LobbyLocation {
        try await call {
            switch try await $0.registerLocation(body: .json(.init(name: name, timeZone: timeZone))) {
            case .created(let created): try created.body.json
            case .ok(let reused): try reused.body.json
            case let other: throw Self.unexpected(other)
            }
        }
    }

    /// Tells the lobby that the location's beacon device is advertising now (owner only); a
    /// sighting of the location proves presence only while it is said about once a minute.
    public func markOnAir(location id: Int64) async throws {
        try await call {
            switch try await $0.markLocationOnAir(path: .init(id: id)) {
            case .noContent: return
            case let other: throw Self.unexpected(other)
            }
        }
    }

    public func location(_ id: Int64) async throws -> LobbyLocation {
        try await call { try await $0.getLocation(path: .init(id: id)).ok.body.json }
    }

    /// A location's tournaments, running ones first.
    public func tournaments(location id: Int64) async throws -> [TournamentSummary] {
        try await call { try await $0.listTournaments(path: .init(id: id)).ok.body.json }
    }

    /// One tournament with its standings.
    public func tournament(_ id: Int64) async throws -> TournamentSummary {
        try await call { try await $0.getTournament(path: .init(id: id)).ok.body.json }
    }

    /// Joins a running tournament (status 403, code `notNearLocation`, unless the lobby has a
    /// recent encounter of ours with its location); joining again returns the entry.
    public func joinTournament(_ id: Int64) async throws -> TournamentEntry {
        try await call {
            switch try await $0.joinTournament(path: .init(id: id)) {
            case .created(let created): try created.body.json
            case .ok(let again): try again.body.json
            case let other: throw Self.unexpected(other)
            }
        }
    }

    public func tournamentEntry(_ id: Int64) async throws -> TournamentEntry {
        try await call { try await $0.getTournamentEntry(path: .init(id: id)).ok.body.json }
    }

    /// Submits the score of round `n` of our entry with its recording, verified like a game's
    /// round; resubmitting with the same `key` is safe.
    public func submitTournamentScore(tournament id: Int64, round n: Int, score: Int, recording: RoundRecording, key: String) async throws -> TournamentEntry {
        try await call {
            switch try await $0.submitTournamentScore(path: .init(id: id, n: n), body: .json(.init(score: score, key: key, recording: recording))) {
            case .created(let created): try created.body.json
            case .ok(let repeated): try repeated.body.json
            case let other: throw Self.unexpected(other)
            }
        }
    }
}

extension LobbyClient {
    /// Publishes the site profile of a location of ours (status 404, code `locationNotFound`,
    /// for another player's, as for one that does not exist): the exponent fitted there, the distances and the readings it used.
    public func publishSiteProfile(location id: Int64, exponent: Double, distances: [Double], readings: Int) async throws -> LobbyLocation {
        try await call {
            try await $0.publishSiteProfile(path: .init(id: id), body: .json(.init(exponent: exponent, distances: distances, readings: readings))).ok.body.json
        }
    }
}

extension LobbyClient {
    /// Places a location of ours on `site` at (`x`, `y`) metres (404 `locationNotFound` for
    /// another player's): beacons of ours placed on one site then calibrate its exponent from
    /// what they hear of each other.
    public func placeLocation(_ id: Int64, site: String, x: Double, y: Double) async throws -> LobbyLocation {
        try await call { try await $0.placeLocation(path: .init(id: id), body: .json(.init(site: site, x: x, y: y))).ok.body.json }
    }

    /// Takes a location of ours off its site.
    public func unplaceLocation(_ id: Int64) async throws -> LobbyLocation {
        try await call { try await $0.unplaceLocation(path: .init(id: id)).ok.body.json }
    }

    /// Reports what our placed location's beacon heard of our other beacons on its site (at most
    /// 100 hearings; 409 `locationNotPlaced` before it is placed).
    public func reportHearings(location id: Int64, _ hearings: [EncounterSighting]) async throws -> LobbyHearingReceipt {
        try await call { try await $0.reportLocationHearings(path: .init(id: id), body: .json(.init(hearings: hearings))).ok.body.json }
    }
}
