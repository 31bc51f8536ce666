package io.github.ratelimit.samples;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.github.ratelimit.samples.SampleApp.Stack;
import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of each packaged sample on one shared store, as a user deploys them, hit by a burst: 200 requests of
 * one client over 64 and over 32 keep-alive connections shared between the two, right after start-up (cold: no
 * request served yet, so no code of the request's path compiled; the store's connection is opened at start-up, as the
 * starter does) and again once warm. Every stack admits exactly the limit, and no decision falls to the failure mode
 * ({@code allow}), which would let requests through uncounted. On Spring Boot 4.0.7's Reactor Netty a burst may leave
 * one keep-alive exchange unanswered (an upstream defect, see {@link #leavesKeepAliveExchangesUnanswered}): then never
 * more than the limit is admitted, and at most one less, the one the client could not see.
 * <p>
 * The store's timeout is 2 s on Redis (10 s on dynalite, a Node.js stand-in far slower than DynamoDB): on a shared
 * machine of two cores, with the test, two applications and the store on it, the samples' 200 ms is missed now and
 * then by any stack, MVC included, which would make the test fail by chance. What the stacks' decisions take under
 * the same burst at the samples' 200 ms is {@code benchmarks/burst-decision-time.sh}'s; that a reactive request goes
 * on on its own event loop, never on the store's thread, is {@code ReactiveThreadsIntegrationTests}'.
 */
class BurstOnSharedStoreTests {

	private static final int LIMIT = 50;

	private static final int REQUESTS = 200;

	private static final Duration WINDOW = Duration.ofHours(1);

	/** No burst starts closer than this to the end of the window (aligned to the epoch, as the stores' are). */
	private static final Duration MARGIN = Duration.ofMinutes(1);

	/** The status counted for an exchange the client got no answer to (it timed out, or the connection failed). */
	private static final int UNANSWERED = -1;

	/** What a sample logs when a decision went to its failure mode, or when its breaker opened. */
	private static final List<String> STORE_FAILURES = List.of("could not decide", "did not answer",
			"circuit opened");

	static Stream<Arguments> stacksAndStores() {
		return Stream.of(Arguments.of(Stack.MVC, "redis"), Arguments.of(Stack.WEBFLUX, "redis"),
				Arguments.of(Stack.GATEWAY, "redis"), Arguments.of(Stack.MVC, "dynamodb"),
				Arguments.of(Stack.WEBFLUX, "dynamodb"));
	}

	@ParameterizedTest(name = "{0} on {1}")
	@MethodSource("stacksAndStores")
	void twoInstancesAdmitExactlyTheLimitUnderABurstColdAndWarm(Stack stack, String store) throws Exception {
		try (SharedStore shared = SharedStore.start(store); EchoUpstream upstream = EchoUpstream.start()) {
			List<SampleApp> instances = startTwo(stack, shared, upstream);
			boolean mayLeaveOneUnanswered = leavesKeepAliveExchangesUnanswered(stack);
			try {
				// A client of its own per burst (the samples trust the loopback proxy's X-Forwarded-For), so that each
				// burst starts from a fresh quota of the per-address 'resources' policy.
				burst(instances, 64, "198.51.100.1", mayLeaveOneUnanswered).assertExactly("cold, 64 connections");
				burst(instances, 32, "198.51.100.2", mayLeaveOneUnanswered).assertExactly("warm, 32 connections");
				burst(instances, 64, "198.51.100.3", mayLeaveOneUnanswered).assertExactly("warm, 64 connections");
				for (SampleApp instance : instances) {
					assertThat(STORE_FAILURES).as("what %s logged", instance)
						.noneMatch((failure) -> instance.log().contains(failure));
				}
			}
			finally {
				instances.forEach(SampleApp::close);
			}
		}
	}

	/** Start both instances at once, as a deployment does. */
	private static List<SampleApp> startTwo(Stack stack, SharedStore store, EchoUpstream upstream) throws Exception {
		List<String> args = new ArrayList<>();
		args.add("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1");
		args.add("--ratelimit.policies.resources.limit=" + LIMIT);
		// A fixed window admits up to twice its limit across its end: an hour's, and no burst near its end.
		args.add("--ratelimit.policies.resources.window=" + WINDOW.toHours() + "h");
		if (stack == Stack.GATEWAY) {
			args.add("--upstream.uri=" + upstream.uri());
		}
		else {
			// The sample's 'edge' filter (100 a second per address) would reject part of a burst of 200 itself.
			args.add("--ratelimit.filters.edge.enabled=false");
		}
		ExecutorService starting = Executors.newFixedThreadPool(2);
		try {
			List<Future<SampleApp>> started = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				started.add(starting.submit(() -> store.configure(SampleApp.launch(stack))
					.args(args.toArray(new String[0]))
					.start()));
			}
			List<SampleApp> instances = new ArrayList<>();
			for (Future<SampleApp> instance : started) {
				instances.add(instance.get());
			}
			return instances;
		}
		finally {
			starting.shutdown();
		}
	}

	/**
	 * Whether the sample's HTTP server is a Reactor Netty older than 1.3.8, which can leave a keep-alive exchange
	 * unanswered when one answered at once follows one answered later on its connection (reactor/reactor-netty#4361,
	 * docs/web-stacks.md): Spring Boot 4.0.7's. The client then times out, and whether that request was admitted is
	 * not known.
	 */
	private static boolean leavesKeepAliveExchangesUnanswered(Stack stack) {
		String version = (stack != Stack.MVC) ? stack.libraryVersion("reactor-netty-http") : null;
		if (version == null) {
			return false;
		}
		String[] parts = version.split("[.-]");
		int major = Integer.parseInt(parts[0]);
		int minor = Integer.parseInt(parts[1]);
		int patch = Integer.parseInt(parts[2]);
		return major == 1 && (minor < 3 || (minor == 3 && patch < 8));
	}

	/** What a burst's client saw: requests admitted, and exchanges the server left unanswered. */
	private record Burst(int admitted, int unanswered, boolean mayLeaveOneUnanswered) {

		/**
		 * Exactly the limit admitted. Where the server may leave an exchange unanswered, one at most, and the limit
		 * within what the client saw admitted and what it could not see: never more.
		 */
		void assertExactly(String burst) {
			if (this.unanswered == 0) {
				assertThat(this.admitted).as(burst).isEqualTo(LIMIT);
				return;
			}
			assertThat(this.mayLeaveOneUnanswered).as("%s: %d exchanges unanswered", burst, this.unanswered).isTrue();
			assertThat(this.unanswered).as("%s: exchanges unanswered", burst).isEqualTo(1);
			assertThat(this.admitted).as(burst).isBetween(LIMIT - this.unanswered, LIMIT);
		}

	}

	/**
	 * Send {@value #REQUESTS} requests of one client over {@code connections} keep-alive connections, half of them to
	 * each instance, all at once, and return what the client saw.
	 */
	private static Burst burst(List<SampleApp> instances, int connections, String client,
			boolean mayLeaveOneUnanswered) throws Exception {
		while (System.currentTimeMillis() % WINDOW.toMillis() > WINDOW.toMillis() - MARGIN.toMillis()) {
			Thread.sleep(1_000);
		}
		AtomicInteger next = new AtomicInteger();
		Map<Integer, Integer> statuses = new TreeMap<>();
		List<CompletableFuture<Map<Integer, Integer>>> senders = new ArrayList<>();
		ExecutorService threads = Executors.newFixedThreadPool(connections);
		try {
			for (int c = 0; c < connections; c++) {
				SampleApp instance = instances.get(c % 2);
				// One client per sender: a connection of its own, kept alive across its requests.
				HttpClient http = HttpClient.newBuilder().executor(Runnable::run).build();
				senders.add(CompletableFuture.supplyAsync(() -> send(http, instance, client, next), threads));
			}
			for (CompletableFuture<Map<Integer, Integer>> sender : senders) {
				sender.join().forEach((status, count) -> statuses.merge(status, count, Integer::sum));
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(statuses.keySet()).as("statuses of the burst: %s", statuses).isSubsetOf(200, 429, UNANSWERED);
		assertThat(statuses.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(REQUESTS);
		return new Burst(statuses.getOrDefault(200, 0), statuses.getOrDefault(UNANSWERED, 0), mayLeaveOneUnanswered);
	}

	private static Map<Integer, Integer> send(HttpClient http, SampleApp instance, String client, AtomicInteger next) {
		Map<Integer, Integer> statuses = new TreeMap<>();
		HttpRequest request = HttpRequest.newBuilder(instance.uri("/api/v1/resources"))
			.header("X-Forwarded-For", client)
			.timeout(Duration.ofSeconds(30))
			.build();
		while (next.getAndIncrement() < REQUESTS) {
			try {
				int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
				statuses.merge(status, 1, Integer::sum);
			}
			catch (IOException ex) {
				// Counted apart, and named, so that the assertion on statuses says what went wrong.
				statuses.merge(UNANSWERED, 1, Integer::sum);
				System.err.println(instance + ": " + ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		return statuses;
	}

	/** A store both instances share, started for the test. */
	private interface SharedStore extends AutoCloseable {

		/** Point a sample at this store. */
		SampleApp.Launch configure(SampleApp.Launch launch);

		@Override
		void close();

		static SharedStore start(String store) {
			if (store.equals("redis")) {
				RedisServer redis = RedisServer.start();
				return new SharedStore() {

					@Override
					public SampleApp.Launch configure(SampleApp.Launch launch) {
						return launch.args("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
								"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.timeout=2s");
					}

					@Override
					public void close() {
						redis.close();
					}

				};
			}
			Assumptions.assumeTrue(Dynalite.isAvailable(), "node and npm are needed to run dynalite");
			Dynalite dynalite = Dynalite.start();
			return new SharedStore() {

				@Override
				public SampleApp.Launch configure(SampleApp.Launch launch) {
					// dynalite takes any credentials; the SDK wants some.
					return launch.env("AWS_ACCESS_KEY_ID", "local")
						.env("AWS_SECRET_ACCESS_KEY", "local")
						.args("--spring.profiles.active=dynamodb", "--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
								// dynalite is one Node.js process writing one item 64 requests at a time on the test's
								// two cores, far slower than DynamoDB: the sample's 500 ms is DynamoDB's budget, not its.
								"--ratelimit.dynamodb.timeout=10s");
				}

				@Override
				public void close() {
					dynalite.close();
				}

			};
		}

	}

}
