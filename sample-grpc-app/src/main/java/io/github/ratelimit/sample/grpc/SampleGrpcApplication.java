package io.github.ratelimit.sample.grpc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A gRPC service whose methods are rate limited with {@code @RateLimited}, on Spring Boot 4.1's gRPC server (port
 * 9090), with the actuator over HTTP (port 8080).
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-grpc-app/target/sample-grpc-app-0.1.0-SNAPSHOT.jar                                # in memory
 * java -jar sample-grpc-app/target/sample-grpc-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis # on Redis
 * }
 */
@SpringBootApplication
public class SampleGrpcApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleGrpcApplication.class, args);
	}

}
