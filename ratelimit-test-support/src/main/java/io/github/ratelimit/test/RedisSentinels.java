package io.github.ratelimit.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A Redis master, its replica and three Sentinels watching them (master name {@value #MASTER_NAME}), all spawned
 * on free ports of 127.0.0.1 and torn down on {@link #close()}. The Sentinels consider the master down after
 * {@code downAfter} and then promote the replica.
 */
public final class RedisSentinels implements AutoCloseable {

	/** The name the Sentinels know the master by. */
	public static final String MASTER_NAME = "ratelimit";

	private final RedisServer master;

	private final RedisServer replica;

	private final List<Sentinel> sentinels;

	private RedisSentinels(RedisServer master, RedisServer replica, List<Sentinel> sentinels) {
		this.master = master;
		this.replica = replica;
		this.sentinels = sentinels;
	}

	/**
	 * Start a master, a replica in sync with it, and three Sentinels that agree on the master.
	 */
	public static RedisSentinels start(Duration downAfter) {
		RedisServer master = RedisServer.spawn();
		RedisServer replica = null;
		List<Sentinel> sentinels = new ArrayList<>();
		try {
			replica = RedisServer.spawn("--replicaof", master.host(), String.valueOf(master.port()));
			RedisServer started = replica;
			RedisServer.awaitUntil(Duration.ofSeconds(30),
					() -> String.valueOf(started.call("INFO", "replication")).contains("master_link_status:up"),
					() -> "the replica did not finish its first sync");
			for (int i = 0; i < 3; i++) {
				sentinels.add(Sentinel.start(master, downAfter));
			}
			RedisSentinels group = new RedisSentinels(master, replica, sentinels);
			RedisServer.awaitUntil(Duration.ofSeconds(30), group::sentinelsAgree,
					() -> "the Sentinels did not find each other and the replica");
			return group;
		}
		catch (RuntimeException ex) {
			sentinels.forEach(Sentinel::close);
			if (replica != null) {
				replica.close();
			}
			master.close();
			throw ex;
		}
	}

	private boolean sentinelsAgree() {
		for (Sentinel sentinel : this.sentinels) {
			List<?> replicas = (List<?>) sentinel.server.call("SENTINEL", "REPLICAS", MASTER_NAME);
			List<?> others = (List<?>) sentinel.server.call("SENTINEL", "SENTINELS", MASTER_NAME);
			if (replicas.isEmpty() || others.size() < 2) {
				return false;
			}
		}
		return true;
	}

	public RedisServer master() {
		return this.master;
	}

	public RedisServer replica() {
		return this.replica;
	}

	/**
	 * Return the Sentinels as {@code spring.data.redis.sentinel.nodes} wants them: {@code host:port,host:port}.
	 */
	public String sentinelAddresses() {
		return this.sentinels.stream()
			.map((sentinel) -> sentinel.server.host() + ":" + sentinel.server.port())
			.collect(Collectors.joining(","));
	}

	/**
	 * Return the port of the master as the first Sentinel sees it now.
	 */
	public int currentMasterPort() {
		List<?> address = (List<?>) this.sentinels.get(0).server.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
				MASTER_NAME);
		return Integer.parseInt(String.valueOf(address.get(1)));
	}

	@Override
	public void close() {
		this.sentinels.forEach(Sentinel::close);
		this.replica.close();
		this.master.close();
	}

	/**
	 * One Sentinel: {@code redis-server <config> --sentinel}, with a configuration file of its own that it rewrites.
	 */
	private static final class Sentinel implements AutoCloseable {

		final RedisServer server;

		private Sentinel(RedisServer server) {
			this.server = server;
		}

		static Sentinel start(RedisServer master, Duration downAfter) {
			int port = Ports.freePort();
			try {
				Path directory = Files.createTempDirectory("ratelimit-sentinel-" + port + "-");
				Path config = directory.resolve("sentinel.conf");
				// A failover whose election split the votes is tried again after twice the failover timeout: 6 s
				// here rather than 20, so that a busy machine's second election still falls within a test's wait.
				Files.writeString(config, String.join("\n", "port " + port, "bind 127.0.0.1", "dir " + directory,
						"sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 2",
						"sentinel down-after-milliseconds " + MASTER_NAME + " " + downAfter.toMillis(),
						"sentinel failover-timeout " + MASTER_NAME + " 3000",
						"sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
				return new Sentinel(RedisServer.spawnSentinel(port, directory, config));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		public void close() {
			this.server.close();
		}

	}

}
