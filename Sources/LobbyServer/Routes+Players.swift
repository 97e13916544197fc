import Foundation
import Hummingbird
import Lobby
import SensorSamples

/// Accounts, profiles, photos, beacons, encounters, statistics, blocks and unlocks.
func addPlayerRoutes(
    _ group: RouterGroup<LobbyRequestContext>, store: LobbyStore, throttle: SignInThrottle, metrics: LobbyMetrics
) {
    group.delete("sessions/current") { _, context in
        _ = try context.player()
        try await store.logOut(token: context.sessionToken ?? "")
        return noContent()
    }
    group.get("players/me") { _, context in
        try JSONBody.response(.ok, try await store.playerWithSettings(try context.player()))
    }
    group.patch("players/me") { request, context in
        let patch = try await JSONBody.decode(PlayerPatch.self, from: request)
        if patch.username != nil || patch.email != nil {
            throw APIError(.badRequest, .immutableField, "\(patch.username != nil ? "username" : "email"): cannot be changed once registered.")
        }
        let id = try context.player()
        if let password = patch.password {
            guard let current = patch.currentPassword else {
                throw APIError(.badRequest, .currentPasswordRequired,
                               "Changing the password needs the current one as well: send it as currentPassword.")
            }
            // Checking the current password is a password guess: it waits like a sign-in does.
            let username = try await store.player(id).username
            if let wait = throttle.admit(.signIn(username: username), from: context.clientAddress) {
                metrics.throttled("passwordChange")
                throw APIError.throttled(retryAfter: wait)
            }
            try await store.changePassword(id, current: current, new: password, session: context.sessionToken ?? "")
        }
        if patch.timeZone != nil || patch.country != nil {
            _ = try await store.updateSettings(id, PlayerSettings(timeZone: patch.timeZone, country: patch.country))
        }
        if patch.firstName != nil || patch.lastName != nil {
            _ = try await store.updatePlayer(id, PlayerChanges(firstName: patch.firstName, lastName: patch.lastName))
        }
        return try JSONBody.response(.ok, try await store.playerWithSettings(id))
    }
    group.delete("players/me") { _, context in
        try await store.deletePlayer(try context.player())
        return noContent()
    }
    group.put("players/me/photo") { request, context in
        let limit = store.configuration.maximumPhotoBytes
        let bytes = try await JSONBody.bytes(of: request, limit: limit)
        return try JSONBody.response(.ok, try await store.setPhoto(try context.player(), bytes: Data(bytes.readableBytesView)))
    }
    group.put("players/me/calibration") { request, context in
        let calibration = try await JSONBody.decode(SensorCalibration.self, from: request, limit: 16 * 1024)
        return try JSONBody.response(.ok, try await store.setCalibration(try context.player(), calibration))
    }
    group.get("players/me/calibration") { _, context in
        try JSONBody.response(.ok, try await store.calibration(try context.player()))
    }
    group.get("players/me/radio-offsets") { _, context in
        try JSONBody.response(.ok, try await store.radioOffsets(try context.player()))
    }
    group.get("players/me/beacon-key") { _, context in
        var response = try JSONBody.response(.ok, try await store.beaconKey(try context.player()))
        response.headers[.cacheControl] = "no-store"
        return response
    }
    group.get("players/:username/photo") { _, context in
        let username = try context.parameters.require("username")
        let photo = try await store.photo(viewer: try context.player(), username: username)
        return Response(
            status: .ok, headers: [.contentType: photo.contentType, .cacheControl: "private, max-age=86400"],
            body: .init(byteBuffer: ByteBuffer(bytes: photo.bytes)))
    }
    group.get("players/:username/stats") { _, context in
        let username = try context.parameters.require("username")
        return try JSONBody.response(.ok, try await store.statistics(viewer: try context.player(), username: username))
    }
    group.get("beacons/:uuid/:major/:minor") { _, context in
        let profile = try await store.resolve(viewer: try context.player(), beacon: try context.beaconPath())
        return try JSONBody.response(.ok, profile)
    }
    group.post("encounters") { request, context in
        let report = try await JSONBody.decode(EncountersRequest.self, from: request)
        return try JSONBody.response(.ok, try await store.recordEncounters(reporter: try context.player(), report.sightings, key: report.key))
    }
    group.get("unlocked") { _, context in
        try JSONBody.response(.ok, try await store.unlocked(try context.player()))
    }
    group.post("blocks/:username") { _, context in
        try await store.block(try context.player(), username: try context.parameters.require("username"))
        return noContent()
    }
    group.delete("blocks/:username") { _, context in
        try await store.unblock(try context.player(), username: try context.parameters.require("username"))
        return noContent()
    }
}
