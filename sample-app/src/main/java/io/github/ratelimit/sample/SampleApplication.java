package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small API whose endpoints are rate limited with {@code @RateLimited}.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar                          # counters in memory
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis   # counters in Redis
 * }
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
