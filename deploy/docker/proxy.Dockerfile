# The encrypting proxy. Built from the repository root (docker-compose.yml sets the context) with
# the Makefile target CI builds it with, `make proxy-jar`: one build recipe, no drift.
FROM maven:3.9.9-eclipse-temurin-17 AS build
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY proxy/pom.xml proxy/pom.xml
COPY proxy/src/main proxy/src/main
RUN make proxy-jar

FROM eclipse-temurin:17.0.15_6-jre-jammy
# An unprivileged user; it reads the KMS credentials the kms service hands it (owned by 10001).
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin fle
COPY --from=build /src/proxy/target/fle-proxy.jar /opt/fle/fle-proxy.jar
USER 10001
EXPOSE 27018
ENTRYPOINT ["java", "-jar", "/opt/fle/fle-proxy.jar"]
CMD ["proxy", "--config", "/etc/fle-proxy/proxy.yaml"]
