package io.github.ratelimit.benchmarks;

import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Counts the commands Redis executed per decision during measurement, from {@code INFO commandstats}: script calls
 * (EVALSHA, EVAL) and every command (those run inside scripts included).
 */
final class CommandCounter {

	private final RedisURI server;

	private final LongAdder decisions = new LongAdder();

	private long scripts;

	private long total;

	private long measuredDecisions;

	private boolean counting;

	CommandCounter(RedisURI server) {
		this.server = server;
	}

	void decided() {
		this.decisions.increment();
	}

	void start() {
		execute(true);
		this.decisions.reset();
		this.counting = true;
	}

	void stop() {
		if (!this.counting) {
			return;
		}
		this.counting = false;
		String stats = execute(false);
		long decided = this.decisions.sum();
		long scripts = 0;
		long total = 0;
		for (String line : stats.split("\r\n")) {
			if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info") && !line.startsWith("cmdstat_config")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				String rest = line.substring(line.indexOf("calls=") + "calls=".length());
				long calls = Long.parseLong(rest.substring(0, rest.indexOf(',')));
				total += calls;
				if (name.equals("evalsha") || name.equals("eval")) {
					scripts += calls;
				}
			}
		}
		this.scripts += scripts;
		this.total += total;
		this.measuredDecisions += decided;
	}

	void report(String label) {
		if (this.measuredDecisions == 0) {
			return;
		}
		System.out.printf("%nREDIS-COMMANDS %s: %.3f script calls and %.3f commands per decision (%d decisions)%n",
				label, (double) this.scripts / this.measuredDecisions, (double) this.total / this.measuredDecisions,
				this.measuredDecisions);
	}

	private String execute(boolean reset) {
		RedisClient client = RedisClient.create(this.server);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			if (reset) {
				connection.sync().configResetstat();
				return "";
			}
			return connection.sync().info("commandstats");
		}
		finally {
			client.shutdown();
		}
	}

}
