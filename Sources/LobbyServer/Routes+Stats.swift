import Foundation
import Hummingbird
import Lobby

/// Leaderboards, leagues and achievements (statistics themselves are under `players/`).
func addStatisticsRoutes(_ group: RouterGroup<LobbyRequestContext>, store: LobbyStore) {
    group.get("leaderboards/:board") { request, context in
        let board = try BoardKind(parsing: try context.parameters.require("board"))
        let query = request.uri.queryParameters
        let offset = try integer(query.get("offset"), name: "offset") ?? 0
        let limit = try integer(query.get("limit"), name: "limit") ?? 20
        let page = try await store.leaderboard(
            viewer: try context.player(), board: board, date: query.get("date"), offset: offset, limit: limit)
        return try JSONBody.response(.ok, page)
    }
    group.get("achievements") { _, context in
        try JSONBody.response(.ok, try await store.achievements(try context.player()))
    }
}

/// A whole number from the query string, or a 400 naming the parameter.
private func integer(_ text: String?, name: String) throws -> Int? {
    guard let text else { return nil }
    guard let value = Int(text) else {
        throw APIError(.badRequest, .invalidField, "\(name): expected a whole number, got \"\(text.prefix(20))\".")
    }
    return value
}
