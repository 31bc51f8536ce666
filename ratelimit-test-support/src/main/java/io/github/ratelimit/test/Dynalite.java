package io.github.ratelimit.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A real DynamoDB-API server for tests: <a href="https://github.com/architect/dynalite">dynalite</a> (npm), run by
 * {@code node} on a free port of 127.0.0.1. {@link #start()} keeps the data in memory (dynalite's MemoryLevel: about a
 * fifth less CPU per request than LevelDB on disk, and most tests send thousands); {@link #startWithDataOnDisk()} keeps
 * it in a temporary directory so that it survives {@link #kill()} and {@link #restart()}. Either way a table is
 * {@code ACTIVE} as soon as it is created (dynalite's default keeps it {@code CREATING} for 500 ms, which only made
 * every test that creates a table wait).
 * <p>
 * The package is installed with {@code npm ci} from the lockfile shipped in this jar (version pinned) into
 * {@code ~/.cache/ratelimit-test-support/dynalite-<lockfile hash>}, once per machine, or taken from
 * {@value #HOME_VARIABLE} if set. dynalite implements neither transactions nor TTL expiry. What this class started, it
 * stops on {@link #close()} (and at JVM exit as a safety net).
 */
public final class Dynalite implements AutoCloseable {

	/** Environment variable naming a directory whose {@code node_modules/dynalite} is used as it is. */
	public static final String HOME_VARIABLE = "RATELIMIT_TEST_DYNALITE_HOME";

	private static final String RESOURCES = "/io/github/ratelimit/test/dynalite/";

	private static final Set<Process> running = ConcurrentHashMap.newKeySet();

	/**
	 * Preloaded into dynalite: a request its client aborts mid-way (a call past the SDK's timeout, a context closed
	 * with a call in flight) makes dynalite throw from the request's error event and exit, which would fail every test
	 * after it for a reason no real DynamoDB has. That error alone is logged and survived; any other still ends it.
	 */
	private static final String SURVIVE_ABORTED_REQUESTS = """
			process.on('uncaughtException', (err) => {
			  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
			    console.error('a client aborted its request: ' + err.message)
			    return
			  }
			  console.error(err)
			  process.exit(1)
			})
			""";

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(Process::destroyForcibly)));
	}

	private final Path cli;

	private final int port;

	private final Path directory;

	/** Whether the data is on disk, under {@link #directory}, and survives a restart. */
	private final boolean dataOnDisk;

	private Process process;

	private Dynalite(Path cli, int port, Path directory, boolean dataOnDisk) {
		this.cli = cli;
		this.port = port;
		this.directory = directory;
		this.dataOnDisk = dataOnDisk;
	}

	/**
	 * Return whether {@code node} is on the PATH, so that dynalite can run. Where the environment variable
	 * {@code CI} is set, a missing {@code node} is an error rather than a reason to skip: CI must run these tests.
	 * @throws IllegalStateException if {@code node} is missing on CI
	 */
	public static boolean isAvailable() {
		boolean available = Executables.find("node") != null;
		String ci = System.getenv("CI");
		if (!available && ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false")) {
			throw new IllegalStateException("node is not on the PATH, and CI is set: the DynamoDB tests need Node.js "
					+ "20 or later (.ci/run installs it)");
		}
		return available;
	}

	/**
	 * Install dynalite if needed and start it on a free port, its data in memory: it cannot be
	 * {@link #restart() restarted} with its data (see {@link #startWithDataOnDisk()}).
	 */
	public static Dynalite start() {
		return start(false);
	}

	/**
	 * Install dynalite if needed and start it on a free port, its data on disk so that it survives {@link #kill()}
	 * and {@link #restart()}.
	 */
	public static Dynalite startWithDataOnDisk() {
		return start(true);
	}

	private static Dynalite start(boolean dataOnDisk) {
		Path cli = install().resolve("node_modules/dynalite/cli.js");
		try {
			Dynalite server = new Dynalite(cli, Ports.freePort(), Files.createTempDirectory("ratelimit-dynalite-"),
					dataOnDisk);
			server.launch();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Return {@code http://127.0.0.1:<port>}. */
	public URI endpoint() {
		return URI.create("http://127.0.0.1:" + this.port);
	}

	public int port() {
		return this.port;
	}

	/**
	 * Kill the process abruptly, as a crash would; its data stays for {@link #restart()}.
	 */
	public void kill() {
		destroyProcess();
		RedisServer.awaitUntil(Duration.ofSeconds(20), () -> Ports.isFree(this.port),
				() -> "port " + this.port + " not released");
	}

	/**
	 * Start the process again on the same port, with the data it had.
	 * @throws IllegalStateException if it was not started with {@link #startWithDataOnDisk()}
	 */
	public void restart() {
		if (!this.dataOnDisk) {
			throw new IllegalStateException("dynalite keeps its data in memory: a restart would lose it; start it "
					+ "with Dynalite.startWithDataOnDisk()");
		}
		if (this.process != null && this.process.isAlive()) {
			kill();
		}
		launch();
	}

	public boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	@Override
	public void close() {
		if (this.process != null && !this.process.isAlive()) {
			// It died while tests used it: its log is the only trace, and the directory goes next.
			reportUnexpectedExit();
		}
		destroyProcess();
		RedisServer.deleteRecursively(this.directory);
	}

	private void reportUnexpectedExit() {
		Path log = this.directory.resolve("dynalite.log");
		String output;
		try {
			output = Files.exists(log) ? Files.readString(log) : "(no log)";
		}
		catch (IOException ex) {
			output = "(log unreadable: " + ex.getMessage() + ")";
		}
		System.err.println("dynalite on port " + this.port + " exited with " + this.process.exitValue()
				+ " before it was stopped; its output:\n" + output);
	}

	private void launch() {
		String node = Executables.find("node");
		if (node == null) {
			throw new IllegalStateException("node is not on the PATH: install Node.js 20 or later to run dynalite");
		}
		Path data = this.directory.resolve("data");
		try {
			Files.createDirectories(data);
			Path guard = this.directory.resolve("survive-aborted-requests.js");
			Files.writeString(guard, SURVIVE_ABORTED_REQUESTS);
			List<String> command = new ArrayList<>(List.of(node, "--require", guard.toString(), this.cli.toString(),
					"--host", "127.0.0.1", "--port", String.valueOf(this.port), "--createTableMs", "0",
					"--deleteTableMs", "0", "--updateTableMs", "0"));
			if (this.dataOnDisk) {
				command.addAll(List.of("--path", data.toString()));
			}
			this.process = new ProcessBuilder(command)
				.redirectErrorStream(true)
				.redirectOutput(this.directory.resolve("dynalite.log").toFile())
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot start dynalite with " + node, ex);
		}
		running.add(this.process);
		RedisServer.awaitUntil(Duration.ofSeconds(30), this::accepts,
				() -> "dynalite on port " + this.port + " did not start; see " + this.directory.resolve("dynalite.log"));
	}

	private boolean accepts() {
		if (!this.process.isAlive()) {
			throw new IllegalStateException("dynalite exited with " + this.process.exitValue() + "; see "
					+ this.directory.resolve("dynalite.log"));
		}
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 200);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private void destroyProcess() {
		if (this.process == null) {
			return;
		}
		this.process.destroyForcibly();
		try {
			this.process.waitFor(20, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		running.remove(this.process);
	}

	/**
	 * Return a directory holding {@code node_modules/dynalite}, installing it with {@code npm ci} from the pinned
	 * lockfile the first time; a file lock keeps concurrent test JVMs from installing at once.
	 */
	static synchronized Path install() {
		String home = System.getenv(HOME_VARIABLE);
		if (home != null && !home.isBlank()) {
			return Path.of(home.trim());
		}
		try {
			byte[] lock = resource("package-lock.json");
			Path target = Path.of(System.getProperty("user.home"), ".cache", "ratelimit-test-support",
					"dynalite-" + sha256(lock).substring(0, 16));
			Path ready = target.resolve(".installed");
			if (Files.exists(ready)) {
				return target;
			}
			Files.createDirectories(target);
			try (FileChannel channel = FileChannel.open(target.resolve(".lock"), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE); FileLock ignored = channel.lock()) {
				if (Files.exists(ready)) {
					return target;
				}
				Files.write(target.resolve("package-lock.json"), lock);
				Files.write(target.resolve("package.json"), resource("package.json"));
				String npm = Executables.find("npm");
				if (npm == null) {
					throw new IllegalStateException("npm is not on the PATH: install Node.js (with npm) to run dynalite");
				}
				Path log = target.resolve("npm.log");
				Process install = new ProcessBuilder(List.of(npm, "ci", "--no-audit", "--no-fund"))
					.directory(target.toFile())
					.redirectErrorStream(true)
					.redirectOutput(log.toFile())
					.start();
				if (!install.waitFor(5, TimeUnit.MINUTES) || install.exitValue() != 0) {
					install.destroyForcibly();
					throw new IllegalStateException("npm ci of dynalite failed in " + target + "; see " + log);
				}
				Files.writeString(ready, "ok");
				return target;
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while installing dynalite", ex);
		}
	}

	private static byte[] resource(String name) throws IOException {
		try (InputStream in = Dynalite.class.getResourceAsStream(RESOURCES + name)) {
			if (in == null) {
				throw new IllegalStateException("Missing " + RESOURCES + name + " in ratelimit-test-support");
			}
			return in.readAllBytes();
		}
	}

	private static String sha256(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public String toString() {
		return "dynalite at " + endpoint();
	}

}
