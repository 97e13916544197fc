import BusTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import Lobby
@testable import LobbyServer

/// The web view in a real browser: Debian's chromium, headless, driven over WebDriver by
/// chromedriver, against a live lobby on 127.0.0.1. `scripts/test` runs this suite on its own after
/// the others, so the timings it reports are not those of a machine busy with 600 other tests.
///
/// With `NEARPLAY_SCREENSHOTS=<folder>` it writes the screenshots it takes there (the README's).
@Suite(.serialized) struct WebBrowserTests {
    static let screenshots = ProcessInfo.processInfo.environment["NEARPLAY_SCREENSHOTS"]

    /// A PNG of the page at `width` × `height`, checked, and kept when screenshots are asked for.
    static func screenshot(_ browser: HeadlessBrowser, _ name: String, width: Int, height: Int) async throws {
        try await browser.setWindowSize(width: width, height: height)
        try await Task.sleep(for: .milliseconds(300))
        let png = try await browser.screenshot()
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 5_000, "\(name): \(png.count) bytes")
        if let folder = screenshots {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try png.write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(name).png"))
        }
    }

    @Test(.timeLimit(.minutes(5))) func theScreenShowsItsBoardAndEveryNewScoreWithinASecondWithoutAReload() async throws {
        let players = (1...20).map { String(format: "player%02d", $0) }
        let server = try await TestServer(throttle: .init(registrationBurst: 100), WebScene.configure)
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let scene = try await WebScene.make(client, extraPlayers: players)
            try await HeadlessBrowser.with(width: 1920, height: 1080) { browser in
                try await browser.open("http://127.0.0.1:\(port)/locations/\(scene.location)")
                #expect(try await browser.find("h1").text == "Café Nord")
                #expect(try await browser.findAll("#present li").count == 1, "alice, the one who played a round here")
                #expect(try await browser.findAll("article.tournament").count == 3)
                // Read through waitFor: the page's first live update may replace the board's
                // rows between finding alice's and reading it (a stale element, once in a full run).
                _ = try await browser.waitFor { try await browser.find(#"tr[data-player="alice"] .total"#).text == "420" }
                // Bob, carol and the 20 not yet playing, counted (also read through waitFor).
                _ = try await browser.waitFor { try await browser.find(".others").text.contains("22 more players") }
                try await browser.waitFor { try await browser.find("#live-status").attribute("data-state") == "live" }
                // A mark on this page's window: a reload would lose it.
                _ = try await browser.execute("window.nearplayMark = 'kept'; return true;")

                var latencies: [Duration] = []
                for (index, player) in players.enumerated() {
                    let score = 500 + 10 * index
                    let started = ContinuousClock.now
                    try await scene.score(score, by: player)
                    try await browser.waitFor(timeout: .seconds(10), interval: .milliseconds(10)) {
                        try await browser.find(#"tr[data-player="\#(player)"] .total"#).text == "\(score)"
                    }
                    latencies.append(ContinuousClock.now - started)
                }
                #expect(try await browser.execute("return window.nearplayMark;") as? String == "kept", "the page was reloaded")
                #expect(try await browser.find("#results li .who").text == players.last, "the newest round leads the list")
                #expect(try await browser.findAll("#present li").count == 21, "alice and the 20 who played")
                let sorted = latencies.sorted()
                let median = sorted[sorted.count / 2], worst = sorted.last!
                print("figure: score -> screen latency (API call to the row on the screen, 20 scores): median \(median.milliseconds) ms, worst \(worst.milliseconds) ms")
                #expect(worst < .seconds(1), "every score within 1 s of being submitted: \(latencies.map(\.milliseconds)) ms")

                try await Self.screenshot(browser, "location-1080p", width: 1920, height: 1080)
                try await Self.screenshot(browser, "location-phone", width: 390, height: 844)
                // The phone layout fits: nothing wider than the window.
                let overflow = try await browser.execute("return document.documentElement.scrollWidth - window.innerWidth;") as? Int
                #expect((overflow ?? 1) <= 0, "the screen scrolls sideways on a phone by \(overflow ?? -1) px")
            }
        }
    }

    @Test(.timeLimit(.minutes(5))) func signInThePlayerPageRefusalsAndSignOutWorkInTheBrowser() async throws {
        let server = try await TestServer(WebScene.configure)
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let site = "http://127.0.0.1:\(port)"
            // A month of games between everyone (and three more), for the chart, ranks,
            // achievements and unlocks; then zoe, who never met anyone.
            _ = try await WebScene.make(client) {
                _ = try await HistorySeeder(store: server.store).seed(players: 8, results: 160, days: 30)
            }
            _ = try await client.player("zoe")
            try await HeadlessBrowser.with(width: 1920, height: 1080) { browser in
                try await browser.open("\(site)/players/alice")
                #expect(try await browser.currentURL.hasPrefix("\(site)/sign-in"), "not signed in: sent to sign in")
                // Keyboard use: the username field has the focus, and Tab reaches the password.
                #expect(try await browser.execute("return document.activeElement.id;") as? String == "username")
                try await browser.find("#username").type("alice")
                try await browser.find("#password").type("wrong password")
                try await browser.find("#sign-in button").click()
                try await browser.waitFor { try await browser.find(".problem").text.contains("do not match") }
                try await browser.find("#password").type("password-123")
                try await browser.find("#sign-in button").click()
                try await browser.waitFor { try await browser.currentURL == "\(site)/players/alice" }
                #expect(try await browser.find("h1").text == "alice")
                #expect(try await browser.findAll("#chart rect").count > 5, "a month of games in the chart")
                #expect(try await browser.find("#games-played").text != "0")
                #expect(try await browser.find("#chart").attribute("role") == "img")
                #expect(try await browser.findAll("#achievements li").count > 3)
                let cookies = try await browser.cookies()
                let session = try #require(cookies.first { $0["name"] as? String == WebSession.sessionCookie })
                #expect(session["httpOnly"] as? Bool == true && session["sameSite"] as? String == "Strict", "\(session)")
                #expect(try await browser.execute("return document.cookie;") as? String == "", "no script reads the session")

                try await Self.screenshot(browser, "player-1080p", width: 1920, height: 1080)
                try await Self.screenshot(browser, "player-phone", width: 390, height: 844)
                let overflow = try await browser.execute("return document.documentElement.scrollWidth - window.innerWidth;") as? Int
                #expect((overflow ?? 1) <= 0, "the player page scrolls sideways on a phone by \(overflow ?? -1) px")
                try await browser.setWindowSize(width: 1280, height: 900)

                // zoe never met alice: her page is not alice's to see.
                try await browser.open("\(site)/players/zoe")
                #expect(try await browser.find("h1").text == "Not yours to see")
                #expect(try await browser.findAll("#stats").isEmpty)

                // A sign-out form sent without its CSRF token is refused, and the session stays.
                try await browser.open("\(site)/players/alice")
                _ = try await browser.execute("""
                    const form = document.getElementById('sign-out');
                    form.querySelector('input[name=csrf]').remove();
                    form.submit();
                    return true;
                    """)
                try await browser.waitFor { try await browser.find("h1").text == "Sign-out refused" }
                try await browser.open("\(site)/players/alice")
                #expect(try await browser.find("h1").text == "alice", "still signed in")

                // Signing out: back to the sign-in page, and the page is closed again.
                try await browser.find("#sign-out button").click()
                try await browser.waitFor { try await browser.currentURL.hasPrefix("\(site)/sign-in") }
                #expect(try await browser.cookies().contains { $0["name"] as? String == WebSession.sessionCookie } == false)
                try await browser.open("\(site)/players/alice")
                #expect(try await browser.currentURL.hasPrefix("\(site)/sign-in"))
            }
        }
    }

    /// The screen keeps itself live: when its lobby goes away it says so, and when the lobby is
    /// back it picks up again and shows what was scored meanwhile, without anyone touching it.
    @Test(.timeLimit(.minutes(5))) func theScreenReconnectsByItselfWhenTheLobbyComesBack() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-reconnect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("lobby.sqlite").path
        let first = try await ServerProcess(database: database, folder: folder, arguments: ["--sign-in-throttle", "off", "--minigames", "statue"])
        let port = first.port
        var scene = try await WebScene.make(HTTPProbe(port: port), extraPlayers: ["erin"])
        try await HeadlessBrowser.with(width: 1280, height: 800) { browser in
            try await browser.open("http://127.0.0.1:\(port)/locations/\(scene.location)")
            try await browser.waitFor { try await browser.find("#live-status").attribute("data-state") == "live" }
            await first.stop(signal: SIGKILL)
            try await browser.waitFor(timeout: .seconds(15)) { try await browser.find("#live-status").attribute("data-state") == "reconnecting" }
            let second = try await ServerProcess(database: database, folder: folder, arguments: ["--sign-in-throttle", "off", "--minigames", "statue", "--port", "\(port)"])
            do {
                #expect(second.port == port)
                scene = WebScene(location: scene.location, daily: scene.daily, tokens: scene.tokens, http: HTTPProbe(port: port))
                try await scene.score(777, by: "erin")
                let waited = try await browser.waitFor(timeout: .seconds(20)) {
                    try await browser.find(#"tr[data-player="erin"] .total"#).text == "777"
                }
                #expect(try await browser.find("#live-status").attribute("data-state") == "live")
                print("figure: screen back live after the lobby restarted, score shown \(waited.milliseconds) ms after it was submitted")
            } catch {
                await second.stop(signal: SIGTERM)
                throw error
            }
            await second.stop(signal: SIGTERM)
        }
    }
}

extension Duration {
    var milliseconds: Int { Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000) }
}
