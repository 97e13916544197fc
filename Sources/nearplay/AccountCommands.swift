import Agent
import ArgumentParser
import Foundation
import LobbyClient

/// Options of `login` and `register`.
struct AccountOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The lobby's URL.", valueName: "url"))
    var lobby: String = "http://127.0.0.1:8080"

    @Option(help: "Your username.")
    var username: String

    @Option(help: ArgumentHelp("The password; read from standard input when absent (safer: not shown in `ps`).", valueName: "password"))
    var password: String?

    @Option(help: ArgumentHelp("Where to store the session (default $XDG_CONFIG_HOME/nearplay/credentials.json, mode 0600).", valueName: "file"))
    var credentials: String?

    func validate() throws {
        guard URL(string: lobby)?.scheme.map({ ["http", "https"].contains($0) }) == true else {
            throw ValidationError("--lobby takes an http:// or https:// URL, not “\(lobby)”.")
        }
    }

    func readPassword() throws -> String {
        if let password { return password }
        if isatty(STDIN_FILENO) != 0 { FileHandle.standardError.write(Data("Password: ".utf8)) }
        guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else {
            throw CommandFailure("No password: pass --password or type it on standard input.")
        }
        return line
    }

    /// Logs in and stores the session owner-only.
    func logIn(client: LobbyClient, password: String) async throws {
        let session = try await client.logIn(username: username, password: password)
        let path = credentials ?? AgentPaths().credentialsFile
        // The secret the agent rotates its beacon identity with, kept with the session.
        let key = try? await client.authenticated(session.token).beaconKey()
        do {
            try Credentials(lobby: client.baseURL, username: username, token: session.token,
                            beaconKey: key.flatMap { RotationKey($0) }).save(to: path)
        } catch {
            throw CommandFailure(error.message)
        }
        print("Logged in as \(username) at \(client.baseURL); the session is stored in \(path).")
    }
}

/// `nearplay login`.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login", abstract: "Log in to a lobby and store the session for the agent (owner-only).")

    @OptionGroup var account: AccountOptions

    func run() async throws {
        let client = LobbyClient(baseURL: account.lobby)
        do {
            try await account.logIn(client: client, password: try account.readPassword())
        } catch let error as LobbyClientError {
            throw CommandFailure(error.status == 401 ? "Wrong username or password." : error.message)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure("Cannot reach the lobby at \(account.lobby): \(error).")
        }
    }
}

/// `nearplay register`.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register", abstract: "Create a player at a lobby, log in and store the session (owner-only).")

    @OptionGroup var account: AccountOptions

    @Option(help: "Your first name, as other players see it.")
    var firstName: String

    @Option(help: "Your last name.")
    var lastName: String

    @Option(help: "Your e-mail address (never shown to other players).")
    var email: String

    func run() async throws {
        let client = LobbyClient(baseURL: account.lobby)
        let password = try account.readPassword()
        do {
            let profile = try await client.register(username: account.username, firstName: firstName, lastName: lastName,
                                                    email: email, password: password)
            print("Registered \(profile.username); your beacon identity is \(profile.beacon.uuid.uuidString)/\(profile.beacon.major)/\(profile.beacon.minor).")
            try await account.logIn(client: client, password: password)
        } catch let error as LobbyClientError {
            throw CommandFailure(error.message)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure("Cannot reach the lobby at \(account.lobby): \(error).")
        }
    }
}
