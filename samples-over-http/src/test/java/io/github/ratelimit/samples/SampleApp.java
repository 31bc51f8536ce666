package io.github.ratelimit.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * A packaged sample started as a user starts it, {@code java -jar <sample>.jar --server.port=<port> <args>}, in a
 * process of its own, its output (standard and error) in a file under {@code target/sample-logs}.
 * <p>
 * {@snippet :
 * try (SampleApp app = SampleApp.start(Stack.MVC, "--ratelimit.policies.login.mode=shadow")) {
 *     HttpRequest request = HttpRequest.newBuilder(app.uri("/api/v1/resources")).build();
 *     // ...
 *     assertThat(app.log()).contains("Started SampleApplication");
 * }
 * SampleApp onRedis = SampleApp.launch(Stack.WEBFLUX)
 *     .args("--spring.profiles.active=redis", "--spring.data.redis.port=" + redis.port())
 *     .env("AWS_REGION", "eu-west-1")
 *     .start();
 * }
 */
public final class SampleApp implements AutoCloseable {

	/** Long enough for the slowest sample to start on a busy machine of two cores. */
	private static final Duration START_DEADLINE = Duration.ofSeconds(60);

	/** What a sample is given to stop gracefully before it is killed. */
	private static final Duration STOP_GRACE = Duration.ofSeconds(5);

	/**
	 * Quick start-up on few cores rather than peak speed: the C1 compiler only, one GC thread, a small heap. A sample
	 * answers a test's few hundred requests, never a load.
	 */
	private static final List<String> JVM_ARGS = List.of("-XX:TieredStopAtLevel=1", "-Xshare:auto",
			"-XX:+UseSerialGC", "-Xmx256m", "-XX:-UsePerfData");

	private static final AtomicInteger started = new AtomicInteger();

	private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final Stack stack;

	private final Process process;

	private final int port;

	private final Path logFile;

	private final Thread killOnExit;

	private SampleApp(Stack stack, Process process, int port, Path logFile) {
		this.stack = stack;
		this.process = process;
		this.port = port;
		this.logFile = logFile;
		// A test JVM that ends without closing it (a failure in @BeforeAll, an interrupted build) leaves no process.
		this.killOnExit = new Thread(process::destroyForcibly, "kill " + logFile.getFileName());
		Runtime.getRuntime().addShutdownHook(this.killOnExit);
	}

	/**
	 * Start a sample with these command-line arguments, after {@code --server.port}, and wait until it answers.
	 * @param stack the sample
	 * @param args its arguments, such as {@code --ratelimit.policies.orders.limit=3}
	 * @return the running sample
	 */
	public static SampleApp start(Stack stack, String... args) {
		return launch(stack).args(args).start();
	}

	/**
	 * Prepare a start with arguments, environment variables or JVM options.
	 * @param stack the sample
	 * @return the launch, to {@link Launch#start() start}
	 */
	public static Launch launch(Stack stack) {
		return new Launch(stack);
	}

	public Stack stack() {
		return this.stack;
	}

	/** The HTTP port it listens on, on 127.0.0.1. */
	public int port() {
		return this.port;
	}

	/** {@code http://127.0.0.1:<port>}. */
	public URI baseUri() {
		return URI.create("http://127.0.0.1:" + this.port);
	}

	/**
	 * Resolve a path, with its query if any, against {@link #baseUri()}.
	 * @param path such as {@code /api/v1/resources}
	 * @return the URI
	 */
	public URI uri(String path) {
		return URI.create(baseUri() + path);
	}

	/** The file its standard output and error go to. */
	public Path logFile() {
		return this.logFile;
	}

	/** Everything it has written so far, standard output and error. */
	public String log() {
		try {
			return Files.readString(this.logFile, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public long pid() {
		return this.process.pid();
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Stop it as an orchestrator does, SIGTERM (Spring Boot shuts down gracefully), then kill it if it has not
	 * stopped within a few seconds.
	 */
	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
				this.process.destroyForcibly().waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		catch (InterruptedException ex) {
			this.process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
		try {
			Runtime.getRuntime().removeShutdownHook(this.killOnExit);
		}
		catch (IllegalStateException ex) {
			// Already shutting down: the hook runs, on a process that has ended.
		}
	}

	@Override
	public String toString() {
		return this.stack + " on port " + this.port + " (pid " + this.process.pid() + ", log " + this.logFile + ")";
	}

	/**
	 * Wait until it answers HTTP at {@code /actuator/health}, whatever its health (a sample whose store is down is
	 * still started): the web server is started last, once the application context is ready.
	 */
	private boolean awaitAnswer(Duration deadline) throws InterruptedException {
		long end = System.nanoTime() + deadline.toNanos();
		while (System.nanoTime() < end) {
			if (!this.process.isAlive()) {
				return false;
			}
			try {
				client.send(HttpRequest.newBuilder(uri("/actuator/health")).timeout(Duration.ofSeconds(2)).build(),
						HttpResponse.BodyHandlers.discarding());
				return true;
			}
			catch (IOException ex) {
				Thread.sleep(100);
			}
		}
		return false;
	}

	private String logTail() {
		String log = log();
		return (log.length() > 4_000) ? "..." + log.substring(log.length() - 4_000) : log;
	}

	/**
	 * The packaged samples, each found at the path of the system property {@code <artifactId>.jar} (set by this
	 * module's build), else in its module's {@code target} folder next to this one; a jar of another Spring Boot than
	 * {@code samples.spring-boot.version} (this build's, when set) is refused.
	 */
	public enum Stack {

		/** {@code sample-app}: Spring MVC on Tomcat. */
		MVC("sample-app"),

		/** {@code sample-webflux-app}: the same API on WebFlux and Reactor Netty. */
		WEBFLUX("sample-webflux-app"),

		/** {@code sample-gateway}: Spring Cloud Gateway's routes, in front of {@code upstream.uri}. */
		GATEWAY("sample-gateway");

		private final String artifactId;

		Stack(String artifactId) {
			this.artifactId = artifactId;
		}

		public String artifactId() {
			return this.artifactId;
		}

		/** The repackaged, runnable jar. */
		public Path jar() {
			String configured = System.getProperty(this.artifactId + ".jar");
			Path jar = (configured != null) ? Path.of(configured) : siblingJar();
			if (!Files.isRegularFile(jar)) {
				throw new IllegalStateException(jar + " does not exist: package the sample first (mvn -B -pl "
						+ this.artifactId + " -am -DskipTests install)");
			}
			String expected = System.getProperty("samples.spring-boot.version");
			String packaged = springBootVersion(jar);
			if (expected != null && !expected.equals(packaged)) {
				// A jar left by a build on another profile would test what this build does not.
				throw new IllegalStateException(jar + " holds Spring Boot " + packaged + ", this build's is " + expected
						+ ": package the sample again on this build's profile");
			}
			return jar.toAbsolutePath().normalize();
		}

		/**
		 * Return the version of a library the packaged sample holds ({@code BOOT-INF/lib/<name>-<version>.jar}), or
		 * {@code null} if it holds none of that name.
		 */
		public String libraryVersion(String name) {
			try (JarFile file = new JarFile(jar().toFile())) {
				String prefix = "BOOT-INF/lib/" + name + "-";
				return file.stream()
					.map(java.util.jar.JarEntry::getName)
					.filter((entry) -> entry.startsWith(prefix) && entry.endsWith(".jar"))
					.map((entry) -> entry.substring(prefix.length(), entry.length() - ".jar".length()))
					.filter((version) -> !version.isEmpty() && Character.isDigit(version.charAt(0)))
					.findFirst()
					.orElse(null);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private static String springBootVersion(Path jar) {
			try (JarFile file = new JarFile(jar.toFile())) {
				Manifest manifest = file.getManifest();
				return (manifest != null) ? manifest.getMainAttributes().getValue("Spring-Boot-Version") : null;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private Path siblingJar() {
			Path target = Path.of("..", this.artifactId, "target");
			try (var jars = Files.list(target)) {
				return jars.filter((path) -> path.getFileName().toString().startsWith(this.artifactId + "-"))
					.filter((path) -> path.getFileName().toString().endsWith(".jar"))
					.findFirst()
					.orElse(target.resolve(this.artifactId + ".jar"));
			}
			catch (IOException ex) {
				return target.resolve(this.artifactId + ".jar");
			}
		}

	}

	/**
	 * A start being prepared: arguments after {@code --server.port}, environment variables, JVM options.
	 */
	public static final class Launch {

		private final Stack stack;

		private final List<String> args = new ArrayList<>();

		private final List<String> jvmArgs = new ArrayList<>(JVM_ARGS);

		private final Map<String, String> environment = new LinkedHashMap<>();

		private Launch(Stack stack) {
			this.stack = stack;
		}

		/** Command-line arguments of the application, such as {@code --spring.profiles.active=redis}. */
		public Launch args(String... args) {
			this.args.addAll(List.of(args));
			return this;
		}

		/** Options of the JVM, such as {@code -Dspring.aot.enabled=true}, after this class's own. */
		public Launch jvmArgs(String... jvmArgs) {
			this.jvmArgs.addAll(List.of(jvmArgs));
			return this;
		}

		/** An environment variable of the process, besides those of this JVM. */
		public Launch env(String name, String value) {
			this.environment.put(name, value);
			return this;
		}

		/**
		 * Start it on a free port and wait until it answers.
		 * @return the running sample
		 * @throws IllegalStateException if it stops or does not answer within a minute, with the end of its log
		 */
		public SampleApp start() {
			Path jar = this.stack.jar();
			// Another process may take the free port before the sample binds it: then it stops, and a second port
			// is tried.
			for (int attempt = 1;; attempt++) {
				SampleApp app = startOn(jar, freePort());
				try {
					if (app.awaitAnswer(START_DEADLINE)) {
						return app;
					}
				}
				catch (InterruptedException ex) {
					app.close();
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while starting " + app, ex);
				}
				app.close();
				String log = app.logTail();
				if (attempt < 3 && log.contains("already in use")) {
					continue;
				}
				throw new IllegalStateException(app + " did not answer within " + START_DEADLINE.toSeconds()
						+ " seconds; the end of its log:\n" + log);
			}
		}

		private SampleApp startOn(Path jar, int port) {
			List<String> command = new ArrayList<>();
			command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
			command.addAll(this.jvmArgs);
			command.add("-jar");
			command.add(jar.toString());
			command.add("--server.port=" + port);
			command.addAll(this.args);
			Path logFile = logDirectory()
				.resolve(this.stack.artifactId() + "-" + started.incrementAndGet() + "-" + port + ".log");
			try {
				Files.writeString(logFile, String.join(" ", command) + System.lineSeparator());
				ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
				builder.environment().putAll(this.environment);
				return new SampleApp(this.stack, builder.start(), port, logFile);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private static Path logDirectory() {
			Path directory = Path.of(System.getProperty("sample-logs.dir", "target/sample-logs"));
			try {
				return Files.createDirectories(directory);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private static int freePort() {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
