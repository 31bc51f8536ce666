package io.github.ratelimit.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A real Redis for tests, never a mock. In order of preference:
 * <ol>
 * <li>the server at the URL in the {@value #URL_VARIABLE} environment variable ({@code redis://host:port});
 * <li>a {@code redis:7} container, when Testcontainers finds a running Docker;
 * <li>a {@code redis-server} from the {@code PATH}, spawned on a free port of 127.0.0.1 with persistence off.
 * </ol>
 * What this class started, it stops on {@link #close()} (and at JVM exit as a safety net). Tests that kill, restart
 * or pause the server use {@link #spawn()}, which always runs a process it controls.
 */
public final class RedisServer implements AutoCloseable {

	/** Environment variable naming an external Redis to test against. */
	public static final String URL_VARIABLE = "RATELIMIT_TEST_REDIS_URL";

	private static final Set<Process> running = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(Process::destroyForcibly)));
	}

	private final String host;

	private final int port;

	private final Kind kind;

	private final Path directory;

	private final List<String> extraArguments;

	/** A Sentinel's configuration file, which comes first on its command line; {@code null} for a server. */
	private Path sentinelConfig;

	private Process process;

	private AutoCloseable container;

	private RedisServer(String host, int port, Kind kind, Path directory, List<String> extraArguments) {
		this.host = host;
		this.port = port;
		this.kind = kind;
		this.directory = directory;
		this.extraArguments = extraArguments;
	}

	/**
	 * Provide a Redis: external, container or spawned, whichever is available first.
	 */
	public static RedisServer start() {
		String url = System.getenv(URL_VARIABLE);
		if (url != null && !url.isBlank()) {
			URI uri = URI.create(url.trim());
			return new RedisServer(uri.getHost(), (uri.getPort() != -1) ? uri.getPort() : 6379, Kind.EXTERNAL, null,
					List.of());
		}
		if (Containers.dockerAvailable()) {
			return Containers.start();
		}
		return spawn();
	}

	/**
	 * Spawn a {@code redis-server} process on a free port; it can be killed, restarted and paused.
	 */
	public static RedisServer spawn(String... extraArguments) {
		return spawnOn(Ports.freePort(), extraArguments);
	}

	static RedisServer spawnOn(int port, String... extraArguments) {
		try {
			Path directory = Files.createTempDirectory("ratelimit-redis-" + port + "-");
			RedisServer server = new RedisServer("127.0.0.1", port, Kind.SPAWNED, directory, List.of(extraArguments));
			server.launch();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Spawn a Sentinel ({@code redis-server <config> --sentinel}) on the given port, in the given directory.
	 */
	static RedisServer spawnSentinel(int port, Path directory, Path config) {
		RedisServer server = new RedisServer("127.0.0.1", port, Kind.SPAWNED, directory, List.of());
		server.sentinelConfig = config;
		server.launch();
		return server;
	}

	static RedisServer container(String host, int port, AutoCloseable container) {
		RedisServer server = new RedisServer(host, port, Kind.CONTAINER, null, List.of());
		server.container = container;
		return server;
	}

	private void launch() {
		List<String> command = new ArrayList<>();
		command.add(executable("redis-server"));
		if (this.sentinelConfig != null) {
			command.addAll(List.of(this.sentinelConfig.toString(), "--sentinel", "--logfile",
					this.directory.resolve("sentinel.log").toString()));
		}
		else {
			command.addAll(List.of("--port", String.valueOf(this.port), "--bind", "127.0.0.1", "--save", "",
					"--appendonly", "no", "--daemonize", "no", "--dir", this.directory.toString(), "--logfile",
					this.directory.resolve("redis.log").toString()));
		}
		command.addAll(this.extraArguments);
		try {
			this.process = new ProcessBuilder(command).directory(this.directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(this.directory.resolve("stdout.log").toFile())
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot start redis-server: install it (apt-get install redis-server), "
					+ "run Docker, or set " + URL_VARIABLE, ex);
		}
		running.add(this.process);
		awaitUntil(Duration.ofSeconds(20), this::answersPing,
				() -> "redis-server on port " + this.port + " did not start; see " + this.directory);
	}

	static String executable(String name) {
		String path = Executables.find(name);
		if (path == null) {
			throw new IllegalStateException(name + " is not on the PATH: install it (apt-get install redis-server), "
					+ "run Docker, or set " + URL_VARIABLE + " to an external Redis");
		}
		return path;
	}

	public String host() {
		return this.host;
	}

	public int port() {
		return this.port;
	}

	public String url() {
		return "redis://" + this.host + ":" + this.port;
	}

	/**
	 * Whether this server was spawned as a process here, so it can be killed and restarted.
	 */
	public boolean isSpawned() {
		return this.kind == Kind.SPAWNED;
	}

	/**
	 * Open a control connection.
	 */
	public RespClient client() {
		return new RespClient(this.host, this.port);
	}

	/**
	 * Send one command on a fresh connection.
	 */
	public Object call(String... command) {
		try (RespClient client = client()) {
			return client.call(command);
		}
	}

	public boolean answersPing() {
		try (RespClient client = client()) {
			return "PONG".equals(client.call("PING"));
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/**
	 * Return the number of calls of a command since the last {@code CONFIG RESETSTAT}, from
	 * {@code INFO commandstats} (for instance {@code evalsha}).
	 */
	public long commandCalls(String command) {
		String stats = String.valueOf(call("INFO", "commandstats"));
		String prefix = "cmdstat_" + command.toLowerCase() + ":calls=";
		for (String line : stats.split("\r\n")) {
			if (line.startsWith(prefix)) {
				String rest = line.substring(prefix.length());
				return Long.parseLong(rest.substring(0, rest.indexOf(',')));
			}
		}
		return 0;
	}

	/**
	 * Return the calls of every command since the last {@code CONFIG RESETSTAT}.
	 */
	public Map<String, Long> commandCalls() {
		Map<String, Long> calls = new ConcurrentHashMap<>();
		String stats = String.valueOf(call("INFO", "commandstats"));
		for (String line : stats.split("\r\n")) {
			if (line.startsWith("cmdstat_")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				String rest = line.substring(line.indexOf("calls=") + "calls=".length());
				calls.put(name, Long.parseLong(rest.substring(0, rest.indexOf(','))));
			}
		}
		return calls;
	}

	public void resetStats() {
		call("CONFIG", "RESETSTAT");
	}

	/**
	 * Stop answering every client for the given time ({@code CLIENT PAUSE <ms> ALL}).
	 */
	public void pause(Duration duration) {
		call("CLIENT", "PAUSE", String.valueOf(duration.toMillis()), "ALL");
	}

	public void unpause() {
		call("CLIENT", "UNPAUSE");
	}

	/**
	 * Kill the process abruptly, as a crash would.
	 */
	public void kill() {
		requireSpawned();
		destroyProcess();
		awaitUntil(Duration.ofSeconds(20), () -> Ports.isFree(this.port), () -> "port " + this.port + " not released");
	}

	/**
	 * Start the process again on the same port, empty.
	 */
	public void restart() {
		requireSpawned();
		if (this.process.isAlive()) {
			kill();
		}
		launch();
	}

	public boolean isRunning() {
		return (this.process != null) ? this.process.isAlive() : answersPing();
	}

	private void destroyProcess() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(20, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		running.remove(this.process);
	}

	private void requireSpawned() {
		if (this.kind != Kind.SPAWNED) {
			throw new IllegalStateException("Only a spawned redis-server can be killed or restarted; use "
					+ "RedisServer.spawn() (this one is " + this.kind + ")");
		}
	}

	@Override
	public void close() {
		if (this.process != null) {
			destroyProcess();
			deleteRecursively(this.directory);
		}
		if (this.container != null) {
			try {
				this.container.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Cannot stop the Redis container", ex);
			}
		}
	}

	static void deleteRecursively(Path directory) {
		if (directory == null) {
			return;
		}
		try (var paths = Files.walk(directory)) {
			paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// A temporary directory left behind is not worth failing a test for.
		}
	}

	static void awaitUntil(Duration timeout, Supplier<Boolean> condition, Supplier<String> failure) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.get()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(failure.get());
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(failure.get(), ex);
			}
		}
	}

	@Override
	public String toString() {
		return this.kind.name().toLowerCase() + " Redis at " + this.host + ":" + this.port;
	}

	private enum Kind {

		EXTERNAL, CONTAINER, SPAWNED

	}

}
