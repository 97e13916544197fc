import Foundation
import Hummingbird
import Lobby

/// Invitations, answers, games and scores.
func addPlayRoutes(_ group: RouterGroup<LobbyRequestContext>, store: LobbyStore) {
    group.post("invitations") { request, context in
        let body = try await JSONBody.decode(InvitationRequest.self, from: request)
        let receipt = try await store.invite(try context.player(), usernames: body.invitees, key: body.key)
        return try JSONBody.response(receipt.created ? .created : .ok, receipt.invitation)
    }
    group.get("invitations") { _, context in
        try JSONBody.response(.ok, try await store.invitations(try context.player()))
    }
    group.post("invitations/:id/accept") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        return try JSONBody.response(.ok, try await store.accept(try context.player(), invitation: id))
    }
    group.post("invitations/:id/decline") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        return try JSONBody.response(.ok, try await store.decline(try context.player(), invitation: id))
    }
    group.get("games") { _, context in
        try JSONBody.response(.ok, try await store.games(try context.player()))
    }
    group.get("games/:id") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        return try JSONBody.response(.ok, try await store.game(try context.player(), id: id))
    }
    // Quickdraw's signal, revealed when the round starts; the reaction is held to this reveal.
    group.post("games/:id/rounds/:n/signal") { _, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let n = try context.pathInteger("n", as: Int.self)
        return try JSONBody.response(.ok, try await store.revealSignal(try context.player(), game: id, round: n))
    }
    group.post("games/:id/rounds/:n/scores") { request, context in
        let id = try context.pathInteger("id", as: Int64.self)
        let n = try context.pathInteger("n", as: Int.self)
        let body = try await JSONBody.decode(ScoreSubmission.self, from: request, limit: ScoreSubmission.maximumBytes)
        let receipt = try await store.submitScore(
            try context.player(), game: id, round: n, score: body.score, key: body.key, recording: body.recording)
        return try JSONBody.response(receipt.created ? .created : .ok, receipt.game)
    }
}
