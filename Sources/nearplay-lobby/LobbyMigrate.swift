import ArgumentParser
import Foundation
import Lobby
import LobbyDatabase
import LobbyServer
import Logging

/// `nearplay lobby migrate`: moves a SQLite lobby to PostgreSQL (issue 23).
struct LobbyMigrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move a SQLite lobby database into a new, empty PostgreSQL database.",
        discussion: """
            Copies every table of the SQLite file (upgraded to the newest schema on a snapshot; the file \
            itself is only read) into the PostgreSQL database, whose schema it applies, keeping every id. \
            Prints each table's rows in both, which must agree. Stop the lobby first: what it writes \
            during the move is not moved. Then start it with `nearplay lobby serve --database URL`.
            """
    )

    @Option(help: ArgumentHelp("The SQLite lobby file to move; only read.", valueName: "file"))
    var from: String

    @Option(help: ArgumentHelp(
        "The empty PostgreSQL database to move it into: postgres://USER@HOST[:PORT]/DATABASE, "
            + "or postgres://USER@/DATABASE?host=/run/postgresql for a socket.",
        valueName: "url"))
    var to: String

    @Option(help: ArgumentHelp("Where to make the snapshot of the SQLite file (as large as the file); removed afterwards.", valueName: "folder"))
    var scratch: String = FileManager.default.temporaryDirectory.path

    @Option(help: "The most rows one INSERT carries.")
    var batchSize = 1000

    func validate() throws {
        guard PostgresDatabase.isURL(to) else {
            throw ValidationError("--to takes a PostgreSQL address, postgres://USER@HOST[:PORT]/DATABASE, got \"\(LobbyServe.redacted(to))\".")
        }
        guard FileManager.default.fileExists(atPath: from) else {
            throw ValidationError("--from: there is no file at \(from); give the lobby's SQLite database file (the --db it runs with).")
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: scratch, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("--scratch: \(scratch) is not a folder; give one with room for a copy of the SQLite file.")
        }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1…10000, got \(batchSize).") }
    }

    func run() async throws {
        var logger = Logger(label: "nearplay.lobby.migrate") { LineLogHandler(label: $0) }
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .notice
        let transfer = LobbyTransfer(from: from, to: to, scratchDirectory: URL(fileURLWithPath: scratch), batchSize: batchSize, logger: logger)
        let report: LobbyTransfer.Report
        do {
            report = try await transfer.run()
        } catch let failure as LobbyTransfer.Failure {
            FileHandle.standardError.write(Data("Error: \(failure)\n".utf8))
            throw ExitCode.failure
        } catch {
            FileHandle.standardError.write(Data("""
                Error: Moving \(from) to \(LobbyServe.redacted(to)) failed (\(error)): check that PostgreSQL runs, that the address, \
                user and database are right and that the user may create tables; then drop and create the database again \
                (it may hold part of the copy) and migrate once more.\n
                """.utf8))
            throw ExitCode.failure
        }
        let width = report.tables.map(\.name.count).max() ?? 0
        print("\("table".padding(toLength: width, withPad: " ", startingAt: 0))  sqlite  postgresql")
        for table in report.tables {
            let name = table.name.padding(toLength: width, withPad: " ", startingAt: 0)
            print("\(name)  \(String(table.sqliteRows).leftPadded(6))  \(String(table.postgresRows).leftPadded(10))")
        }
        print("Moved \(report.rows) rows in \(report.tables.count) tables from \(from) to \(LobbyServe.redacted(to)); "
              + "start the lobby with `nearplay lobby serve --database \(LobbyServe.redacted(to))`.")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
