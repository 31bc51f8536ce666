package io.github.ratelimit.benchmarks.peers;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * One application for benchmarks/peers.sh: the same small body on three endpoints, {@code /unlimited} (no limit),
 * {@code /ours} ({@code @RateLimited}) and {@code /peer} (bucket4j-spring-boot-starter's servlet filter). Which
 * limiter and which store are measured is chosen by profile:
 * <ul>
 * <li>{@code ours-memory}, {@code ours-redis}: our starter in memory or on Redis (Lettuce); Bucket4j off.</li>
 * <li>{@code bucket4j-memory}, {@code bucket4j-jedis}, {@code bucket4j-lettuce}: Bucket4j's filter on {@code /peer}
 * through JCache (Caffeine), Jedis or Lettuce; our starter stays on the class path, idle on {@code /peer}.</li>
 * </ul>
 * Both key by the client's address from {@code X-Forwarded-For}, with limits that never reject (see
 * application.yml).
 */
@SpringBootApplication
public class PeersApplication {

	public static void main(String[] args) {
		SpringApplication.run(PeersApplication.class, args);
	}

}
