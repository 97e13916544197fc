import Foundation
import Hummingbird
import Lobby

/// Multiplayer locations and their tournaments.
func addLocationRoutes(_ group: RouterGroup<LobbyRequestContext>, store: LobbyStore) {
    group.post("locations") { request, context in
        let body = try await JSONBody.decode(LocationRegistration.self, from: request)
        let receipt = try await store.registerLocation(try context.player(), name: body.name, timeZone: body.timeZone)
        return try JSONBody.response(receipt.created ? .created : .ok, receipt.location)
    }
    group.get("locations/:id") { _, context in
        let viewer = try context.player()
        return try JSONBody.response(.ok, try await store.location(try context.pathInteger("id", as: Int64.self), viewer: viewer))
    }
    group.put("locations/:id/site-profile") { request, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let body = try await JSONBody.decode(SiteProfilePublication.self, from: request)
        return try JSONBody.response(.ok, try await store.publishSiteProfile(
            try context.player(), location: id, exponent: body.exponent, distances: body.distances, readings: body.readings))
    }
    group.put("locations/:id/position") { request, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let body = try await JSONBody.decode(LocationPlacement.self, from: request)
        return try JSONBody.response(.ok, try await store.placeLocation(try context.player(), location: id, site: body.site, x: body.x, y: body.y))
    }
    group.delete("locations/:id/position") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        return try JSONBody.response(.ok, try await store.unplaceLocation(try context.player(), location: id))
    }
    group.post("locations/:id/hearings") { request, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let body = try await JSONBody.decode(LocationHearings.self, from: request)
        return try JSONBody.response(.ok, try await store.reportLocationHearings(try context.player(), location: id, body.hearings))
    }
    group.put("locations/:id/on-air") { _, context in
        try await store.markOnAir(try context.player(), location: try context.pathInteger("id", as: Int64.self))
        return Response(status: .noContent)
    }
    group.get("locations/:id/beacon-key") { _, context in
        let key = try await store.locationBeaconKey(try context.player(), location: try context.pathInteger("id", as: Int64.self))
        var response = try JSONBody.response(.ok, key)
        response.headers[.cacheControl] = "no-store"
        return response
    }
    group.get("locations/beacons/:uuid/:major/:minor") { _, context in
        let beacon = try context.beaconPath()
        return try JSONBody.response(.ok, try await store.resolveLocation(viewer: try context.player(), beacon: beacon))
    }
    group.get("locations/:id/tournaments") { _, context in
        _ = try context.player()
        return try JSONBody.response(.ok, try await store.tournaments(location: try context.pathInteger("id", as: Int64.self)))
    }
    group.get("tournaments/:id") { _, context in
        _ = try context.player()
        return try JSONBody.response(.ok, try await store.tournament(try context.pathInteger("id", as: Int64.self)))
    }
    group.post("tournaments/:id/entries") { _, context in
        let receipt = try await store.joinTournament(try context.player(), tournament: try context.pathInteger("id", as: Int64.self))
        return try JSONBody.response(receipt.created ? .created : .ok, receipt.entry)
    }
    group.get("tournaments/:id/entries/me") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        return try JSONBody.response(.ok, try await store.tournamentEntry(try context.player(), tournament: id))
    }
    group.post("tournaments/:id/entries/me/rounds/:n/signal") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let n = try context.pathInteger("n", as: Int.self)
        return try JSONBody.response(.ok, try await store.revealTournamentSignal(try context.player(), tournament: id, round: n))
    }
    group.post("tournaments/:id/entries/me/rounds/:n/scores") { request, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let n = try context.pathInteger("n", as: Int.self)
        let body = try await JSONBody.decode(ScoreSubmission.self, from: request, limit: ScoreSubmission.maximumBytes)
        let receipt = try await store.submitTournamentScore(
            try context.player(), tournament: id, round: n, score: body.score, key: body.key, recording: body.recording)
        return try JSONBody.response(receipt.created ? .created : .ok, receipt.entry)
    }
}

/// `POST /v1/locations`.
struct LocationRegistration: Decodable {
    var name: String
    var timeZone: String?
}

/// `PUT /v1/locations/{id}/site-profile`.
struct SiteProfilePublication: Decodable {
    var exponent: Double
    var distances: [Double]
    var readings: Int
}

/// `PUT /v1/locations/{id}/position`.
struct LocationPlacement: Decodable {
    var site: String
    var x: Double
    var y: Double
}

/// `POST /v1/locations/{id}/hearings`.
struct LocationHearings: Decodable {
    var hearings: [EncounterReport]
}
