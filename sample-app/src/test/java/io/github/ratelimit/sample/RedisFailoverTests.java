package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.test.RedisSentinels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on the 'redis' profile, on a Redis Cluster with replicas and on Sentinel, while the master that holds
 * the client's counter is killed mid-load: with nothing configured but the addresses, decisions come back from Redis
 * within the failover time plus a few seconds, no client sees an error meanwhile (the failure mode lets requests
 * through), and the count carries on from where it was, less at most the writes the replica had not received yet.
 */
class RedisFailoverTests {

	/** A limit that the test's traffic never reaches, so that every admission shows the count. */
	private static final long LIMIT = 1_000_000;

	/** What clients may wait for decisions from Redis after the kill, beyond the failover itself. */
	private static final Duration RECOVERY_MARGIN = Duration.ofSeconds(8);

	/** Writes a replica may miss when its master dies: the last few milliseconds of traffic. */
	private static final long LOST_WRITES_BOUND = 200;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ConfigurableApplicationContext app;

	private AutoCloseable servers;

	@AfterEach
	void stop() throws Exception {
		if (this.app != null) {
			this.app.close();
		}
		if (this.servers != null) {
			this.servers.close();
		}
	}

	@Test
	void aKilledClusterMasterIsReplacedByItsReplicaWithinSecondsAndTheCountCarriesOn() throws Exception {
		Duration nodeTimeout = Duration.ofSeconds(2);
		RedisCluster cluster = RedisCluster.start(3, 1, nodeTimeout);
		this.servers = cluster;
		start("--spring.data.redis.cluster.nodes=" + cluster.nodeAddresses());
		RedisServer master = cluster.masterOf("ratelimit:{resources:127.0.0.1}:fx");
		Outcome outcome = killUnderLoad(master);
		assertThat(outcome.errors()).as("answers other than 200").isEmpty();
		assertThat(outcome.recovery()).as("time until decisions came from Redis again")
			.isLessThan(nodeTimeout.plus(RECOVERY_MARGIN));
		assertThat(outcome.countAfter()).as("the count after the failover")
			.isGreaterThan(outcome.countBefore() - LOST_WRITES_BOUND);
		assertThat(outcome.storeDecidedAtTheEnd()).as("decided by Redis once recovered").isTrue();
	}

	@Test
	void aKilledSentinelMasterIsReplacedByItsReplicaWithinSecondsAndTheCountCarriesOn() throws Exception {
		Duration downAfter = Duration.ofSeconds(1);
		RedisSentinels sentinels = RedisSentinels.start(downAfter);
		this.servers = sentinels;
		start("--spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
				"--spring.data.redis.sentinel.nodes=" + sentinels.sentinelAddresses());
		Outcome outcome = killUnderLoad(sentinels.master());
		assertThat(sentinels.currentMasterPort()).as("the replica took over").isEqualTo(sentinels.replica().port());
		assertThat(outcome.errors()).as("answers other than 200").isEmpty();
		assertThat(outcome.recovery()).as("time until decisions came from Redis again")
			.isLessThan(downAfter.plus(RECOVERY_MARGIN));
		assertThat(outcome.countAfter()).as("the count after the failover")
			.isGreaterThan(outcome.countBefore() - LOST_WRITES_BOUND);
		assertThat(outcome.storeDecidedAtTheEnd()).as("decided by Redis once recovered").isTrue();
	}

	private void start(String... redis) {
		List<String> arguments = new ArrayList<>(List.of("--spring.profiles.active=redis", "--server.port=0",
				"--ratelimit.filters.edge.enabled=false",
				"--ratelimit.failure-mode=allow", "--ratelimit.failure-log-interval=1h",
				"--ratelimit.policies.resources.limit=" + LIMIT, "--ratelimit.policies.resources.window=1h"));
		arguments.addAll(List.of(redis));
		this.app = SpringApplication.run(SampleApplication.class, arguments.toArray(new String[0]));
	}

	/**
	 * Send requests from four clients for two seconds, kill the master, and go on until Redis has decided for three
	 * seconds again (at most 30 seconds).
	 */
	private Outcome killUnderLoad(RedisServer master) throws Exception {
		int port = Integer.parseInt(this.app.getEnvironment().getProperty("local.server.port"));
		URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/resources");
		awaitDecidedByRedis(uri);
		ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
		AtomicBoolean stop = new AtomicBoolean();
		ExecutorService clients = Executors.newFixedThreadPool(4);
		for (int i = 0; i < 4; i++) {
			clients.execute(() -> {
				while (!stop.get()) {
					answers.add(send(uri));
				}
			});
		}
		try {
			TimeUnit.SECONDS.sleep(2);
			long killedAt = System.nanoTime();
			master.kill();
			long deadline = killedAt + TimeUnit.SECONDS.toNanos(30);
			Long recoveredAt = null;
			while (System.nanoTime() < deadline) {
				TimeUnit.MILLISECONDS.sleep(100);
				if (recoveredAt == null) {
					recoveredAt = answers.stream()
						.filter((answer) -> answer.at() > killedAt + TimeUnit.MILLISECONDS.toNanos(300)
								&& answer.decidedByRedis())
						.map(Answer::at)
						.min(Long::compare)
						.orElse(null);
				}
				else if (System.nanoTime() - recoveredAt > TimeUnit.SECONDS.toNanos(3)) {
					break;
				}
			}
			stop.set(true);
			clients.shutdown();
			assertThat(clients.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
			assertThat(recoveredAt).as("decisions came back from Redis").isNotNull();
			long recovered = recoveredAt;
			List<Answer> all = new ArrayList<>(answers);
			long before = all.stream()
				.filter((answer) -> answer.at() < killedAt && answer.decidedByRedis())
				.mapToLong(Answer::count)
				.max()
				.orElseThrow();
			long after = all.stream()
				.filter((answer) -> answer.at() >= recovered && answer.decidedByRedis())
				.mapToLong(Answer::count)
				.min()
				.orElseThrow();
			List<Answer> last = all.stream().filter((answer) -> answer.at() > recovered + TimeUnit.SECONDS.toNanos(2))
				.toList();
			System.out.printf("Failover of %s: decisions from Redis again after %d ms; count %d before, %d after%n",
					master, TimeUnit.NANOSECONDS.toMillis(recovered - killedAt), before, after);
			return new Outcome(all.stream().filter((answer) -> answer.status() != 200).toList(),
					Duration.ofNanos(recovered - killedAt), before, after,
					!last.isEmpty() && last.stream().allMatch(Answer::decidedByRedis));
		}
		finally {
			stop.set(true);
			clients.shutdownNow();
		}
	}

	private void awaitDecidedByRedis(URI uri) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (!send(uri).decidedByRedis()) {
			assertThat(System.nanoTime()).as("Redis decides within 20 s of start-up").isLessThan(deadline);
			TimeUnit.MILLISECONDS.sleep(50);
		}
	}

	private Answer send(URI uri) {
		long at = System.nanoTime();
		try {
			HttpResponse<String> response = this.client.send(
					HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
					HttpResponse.BodyHandlers.ofString());
			long remaining = response.headers().firstValueAsLong("RateLimit-Remaining").orElse(-1);
			return new Answer(at, response.statusCode(), remaining);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			return new Answer(at, -1, -1);
		}
	}

	/**
	 * One answer: when it was asked, its status, and the remaining count it showed ({@code LIMIT} when the failure
	 * mode let it through uncounted).
	 */
	record Answer(long at, int status, long remaining) {

		boolean decidedByRedis() {
			return this.status == 200 && this.remaining >= 0 && this.remaining < LIMIT;
		}

		long count() {
			return LIMIT - this.remaining;
		}

	}

	record Outcome(List<Answer> errors, Duration recovery, long countBefore, long countAfter,
			boolean storeDecidedAtTheEnd) {
	}

}
