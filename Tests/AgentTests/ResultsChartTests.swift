import Agent
import Foundation
import LobbyClient
import Testing

@Suite struct ResultsChartTests {
    func day(_ n: Int, wins: Int, losses: Int) throws -> PlayerStatistics.Day {
        let json = #"{"day":"2027-01-\#(String(format: "%02d", n))","wins":\#(wins),"losses":\#(losses),"draws":0}"#
        return try JSONDecoder().decode(PlayerStatistics.Day.self, from: Data(json.utf8))
    }

    @Test func oneColumnADayScaledToTheBusiestDay() throws {
        let days = try [day(1, wins: 0, losses: 0), day(2, wins: 8, losses: 1), day(3, wins: 4, losses: 0), day(4, wins: 1, losses: 2)]
        let lines = ResultsChart.lines(days)
        #expect(lines == [
            "won    █▄▁  8 max",
            "lost   ▁ ▂  2 max",
            "      2027-01-01 … 2027-01-04",
        ])
    }

    @Test func anEmptyMonthDrawsNoBars() throws {
        let days = try (1...30).map { try day($0, wins: 0, losses: 0) }
        let lines = ResultsChart.lines(days)
        #expect(lines[0] == "won   " + String(repeating: " ", count: 30) + "  none")
        #expect(lines[1].hasSuffix("none"))
    }
}
