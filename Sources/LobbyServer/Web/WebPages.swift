import Foundation
import Lobby

/// What the templates are rendered with: plain values, with every date and count already said in
/// words, so the templates only place them.

/// The signed-in player, for the bar at the top of every page (its page, sign-out).
struct WebViewer {
    let id: Int64
    let username: String
    /// The session token (never rendered).
    let token: String
    /// The CSRF token of this session's forms (stored: templates read stored properties only).
    let csrf: String

    init(id: Int64, username: String, token: String) {
        self.id = id
        self.username = username
        self.token = token
        csrf = WebSession.csrfToken(session: token)
    }
}

/// Times as a place's people read them.
struct LocalTime {
    let zone: TimeZone

    init(_ identifier: String) { zone = TimeZone(identifier: identifier) ?? TimeZone(identifier: "UTC")! }

    func clock(_ date: Date) -> String { format(date, "HH:mm") }
    func day(_ date: Date) -> String { format(date, "d MMMM yyyy") }
    func dayAndClock(_ date: Date) -> String { format(date, "d MMM, HH:mm") }

    private func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }

    /// "3 h 12 min left", as the screen's script counts it down.
    static func left(until end: Date, now: Date) -> String {
        let seconds = end.timeIntervalSince(now)
        if seconds <= 0 { return "ending now" }
        let minutes = Int(seconds / 60)
        if minutes < 1 { return "\(Int(seconds.rounded(.up))) s left" }
        if minutes < 60 { return "\(minutes) min left" }
        let hours = minutes / 60
        if hours < 48 { return "\(hours) h \(minutes % 60) min left" }
        return "\(hours / 24) days \(hours % 24) h left"
    }
}

func plural(_ count: Int, _ one: String, _ many: String? = nil) -> String {
    "\(count) \(count == 1 ? one : many ?? one + "s")"
}

/// `/locations/{id}` and its live board.
struct LocationPage {
    struct Card {
        let id: Int64
        let title: String
        let endsAt: String
        let timeLeft: String
        let entriesText: String
        let minigamesText: String
        let hasStandings: Bool
        let standingsCount: Int
        let standings: [TournamentStanding]
    }

    struct Line {
        let player: String
        let score: Int
        let minigame: String
        let tournament: String
    }

    let id: Int64
    let name: String
    let readAt: String
    let viewer: WebViewer?
    let hasPresent: Bool
    let present: [String]
    let presentSummary: String
    let tournaments: [Card]
    let hasResults: Bool
    let results: [Line]

    init(_ screen: LocationScreen, viewer: WebViewer?) {
        let time = LocalTime(screen.timeZone)
        id = screen.id
        name = screen.name
        readAt = time.clock(screen.at)
        self.viewer = viewer
        hasPresent = !screen.present.isEmpty
        present = screen.present
        // Fewer than three others are "a few": a count of one would name the one regular.
        let others = screen.othersPresent < 3 ? "a few" : "\(screen.othersPresent)"
        presentSummary = switch (screen.present.count, screen.othersPresent) {
        case (0, 0): "Nobody has been seen here in the last few minutes."
        case (0, _): "\(others.prefix(1).uppercased() + others.dropFirst()) players here, not playing right now."
        case (_, 0): "Playing here now."
        case (_, _): "Playing here now, and \(others) more players not playing right now."
        }
        let isoFormat = Date.ISO8601FormatStyle()
        tournaments = screen.tournaments.map { tournament in
            Card(
                id: tournament.id, title: "\(tournament.period.rawValue.capitalized) tournament",
                endsAt: tournament.endsAt.formatted(isoFormat),
                timeLeft: LocalTime.left(until: tournament.endsAt, now: screen.at),
                entriesText: plural(tournament.entries, "entry", "entries"),
                minigamesText: tournament.minigames.map(\.rawValue.capitalized).joined(separator: ", "),
                hasStandings: !tournament.standings.isEmpty, standingsCount: tournament.standings.count,
                standings: tournament.standings)
        }
        hasResults = !screen.results.isEmpty
        results = screen.results.map {
            Line(player: $0.player, score: $0.score, minigame: $0.minigame.rawValue.capitalized, tournament: $0.period.rawValue)
        }
    }
}

/// `/players/{username}`: a player's own page, or what another player may see of it.
struct PlayerPage {
    struct Rank { let board: String; let text: String }
    struct League { let name: String; let detail: String }
    struct Achievement { let title: String; let reached: String; let progressText: String; let value: Int; let goal: Int }
    struct Invitation { let text: String; let expires: String }

    let viewer: WebViewer?
    let username: String
    let fullName: String?
    let isOwn: Bool
    let stats: PlayerStatistics
    let bestScore: String
    let chart: String
    let chartCaption: String
    let registeredOn: String
    let unlockedRank: String
    var ranks: [Rank] = []
    var league: League? = nil
    var achievements: [Achievement] = []
    var hasContacts = false
    var contacts: [UnlockedPlayer] = []
    var hasInvitations = false
    var invitations: [Invitation] = []

    /// Another player's page: its statistics only, as `GET /v1/players/{username}/stats` gives them.
    init(viewer: WebViewer, statistics: PlayerStatistics, fullName: String? = nil, isOwn: Bool = false) {
        self.viewer = viewer
        username = statistics.username
        self.fullName = fullName
        self.isOwn = isOwn
        stats = statistics
        bestScore = statistics.bestScore.map(String.init) ?? "–"
        chart = ActivityChart.svg(statistics.days)
        let wins = statistics.days.reduce(0) { $0 + $1.wins }, losses = statistics.days.reduce(0) { $0 + $1.losses }
        chartCaption = "Games won (above the line) and lost (below) per day, in \(statistics.timeZone) time: \(wins) won, \(losses) lost."
        registeredOn = LocalTime(statistics.timeZone).day(statistics.registeredAt)
        unlockedRank = statistics.unlocked.count == 0
            ? "not ranked yet"
            : "rank \(statistics.unlocked.rank) of \(statistics.unlocked.rankedPlayers)"
    }

    /// The player's own page: everything the API tells it about itself.
    static func own(
        viewer: WebViewer, player: Player, statistics: PlayerStatistics, boards: [(String, Leaderboard)], league: Leaderboard?,
        achievements: [AchievementProgress], unlocked: [UnlockedPlayer], invitations: [Lobby.Invitation], now: Date
    ) -> PlayerPage {
        var page = PlayerPage(viewer: viewer, statistics: statistics, fullName: "\(player.firstName) \(player.lastName)", isOwn: true)
        page.ranks = boards.map { name, board in
            Rank(board: name, text: board.me.map { "rank \($0.rank) of \(board.participants), \(plural($0.points, "point"))" } ?? "no points yet")
        }
        if let info = league?.league {
            let place = league?.me.map { entry in
                let movement = entry.movement == "up" ? ", moving up" : entry.movement == "down" ? ", moving down" : ""
                return "(tier \(info.tier), rank \(entry.rank) in its group this week\(movement))"
            }
            page.league = League(name: info.name, detail: place ?? "(tier \(info.tier); play a game this week to join a group)")
        }
        page.achievements = achievements.map { achievement in
            let granted = achievement.tiers.filter { $0.grantedAt != nil }
            let next = achievement.tiers.first { $0.grantedAt == nil }
            let goal = next?.threshold ?? achievement.tiers.last?.threshold ?? max(achievement.value, 1)
            return Achievement(
                title: achievement.title, reached: granted.last?.title ?? "",
                progressText: next.map { "\(min(achievement.value, $0.threshold)) of \($0.threshold) \(achievement.measure) for \($0.title)" }
                    ?? "every tier reached (\(achievement.value) \(achievement.measure))",
                value: min(achievement.value, goal), goal: goal)
        }
        page.contacts = unlocked.sorted { $0.username.lowercased() < $1.username.lowercased() }
        page.hasContacts = !unlocked.isEmpty
        let time = LocalTime(statistics.timeZone)
        page.invitations = invitations.compactMap { invitation in
            guard invitation.state == .pending else { return nil }
            let expires = "until \(time.dayAndClock(invitation.expiresAt))"
            if invitation.inviter.lowercased() == player.username.lowercased() {
                let waiting = invitation.invitees.filter { $0.response == .pending }.map(\.username)
                guard !waiting.isEmpty else { return nil }
                return Invitation(text: "You invited \(waiting.joined(separator: ", ")): waiting for an answer", expires: expires)
            }
            guard invitation.invitees.contains(where: { $0.username.lowercased() == player.username.lowercased() && $0.response == .pending }) else { return nil }
            return Invitation(text: "\(invitation.inviter) invites you to a game: answer with your agent", expires: expires)
        }
        page.hasInvitations = !page.invitations.isEmpty
        return page
    }
}

/// `/sign-in`.
struct SignInPage {
    let signInPage = true
    let viewer: WebViewer? = nil
    let csrf: String
    let next: String
    var username = ""
    var problem: String? = nil
}

/// A refusal or a notice, as a page.
struct MessagePage {
    struct Link { let href: String; let text: String }
    let viewer: WebViewer?
    let heading: String
    let message: String
    let link: Link?
}
